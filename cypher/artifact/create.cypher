// mode: write
// changes: artifact/by_key
// Registers an artifact (its bytes are already in the content-addressed store),
// with lineage edges to the artifacts it was made from.
// The ledger entries made since the last commit ($entries) are chained and stored with it.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
FOREACH (tip IN CASE WHEN size($entries) = 0 THEN [] ELSE [last($entries).props] END |
  SET run.ledger_head = tip.hash, run.ledger_size = tip.index + 1)
CREATE (a:Artifact)
SET a = $props
WITH a
CALL {
  UNWIND $entries AS entry
  MATCH (r:Run {id: $run_id})
  CREATE (e:LedgerEntry)
  SET e = entry.props
  CREATE (e)-[:RECORDED_IN]->(r)
  WITH collect({e: e, prev: entry.prev_id}) AS made
  OPTIONAL MATCH (head:LedgerEntry {id: made[0].prev})
  UNWIND made AS m
  WITH m.e AS later,
       [x IN made WHERE x.e.id = m.prev | x.e] + [h IN [head] WHERE h IS NOT NULL AND h.id = m.prev] AS earlier
  FOREACH (x IN earlier | CREATE (later)-[:FOLLOWS]->(x))
}
WITH a
UNWIND (CASE WHEN size($input_ids) = 0 THEN [null] ELSE $input_ids END) AS iid
OPTIONAL MATCH (src:Artifact {id: iid})
FOREACH (x IN CASE WHEN src IS NULL THEN [] ELSE [src] END | MERGE (a)-[:DERIVED_FROM]->(x))
RETURN a.id AS id, count(src) AS inputs
