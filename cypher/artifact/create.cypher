// mode: write
// changes: artifact/by_key
// Registers an artifact (its bytes are already in the content-addressed store),
// with lineage edges to the artifacts it was made from.
// The ledger entries made since the last commit ($entries) are chained and stored with it.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
// include: ledger_tip
CREATE (a:Artifact)
SET a = $props
WITH a
// include: store_entries
WITH a
UNWIND (CASE WHEN size($input_ids) = 0 THEN [null] ELSE $input_ids END) AS iid
OPTIONAL MATCH (src:Artifact {id: iid})
FOREACH (x IN CASE WHEN src IS NULL THEN [] ELSE [src] END | MERGE (a)-[:DERIVED_FROM]->(x))
RETURN a.id AS id, count(src) AS inputs
