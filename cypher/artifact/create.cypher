// mode: write
// changes: artifact/by_key
// Registers an artifact (its bytes are already in the content-addressed store),
// with lineage edges to the artifacts it was made from.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
CREATE (a:Artifact)
SET a = $props
WITH a
UNWIND (CASE WHEN size($input_ids) = 0 THEN [null] ELSE $input_ids END) AS iid
OPTIONAL MATCH (src:Artifact {id: iid})
FOREACH (x IN CASE WHEN src IS NULL THEN [] ELSE [src] END | MERGE (a)-[:DERIVED_FROM]->(x))
RETURN a.id AS id, count(src) AS inputs
