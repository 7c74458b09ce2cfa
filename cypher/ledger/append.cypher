// mode: write
// cache: keep
// Stores ledger entries no commit carried (a run that stops, a refusal read back), with
// the log lines pending beside them. Guarded by the chain's stored head and size, so two
// writers cannot both extend it; each entry FOLLOWS the one before it.
MATCH (run:Run {id: $run_id})
WHERE coalesce(run.ledger_head, $genesis) = $entries[0].props.prev_hash
  AND coalesce(run.ledger_size, 0) = $entries[0].props.index
SET run.ledger_head = last($entries).props.hash, run.ledger_size = last($entries).props.index + 1
WITH run
CALL {
  UNWIND $logs AS entry
  MERGE (l:LogEntry {id: entry.id})
  SET l += entry.props
  WITH l, entry
  OPTIONAL MATCH (about:Goal {id: entry.goal_id})
  FOREACH (x IN CASE WHEN about IS NULL THEN [] ELSE [about] END | MERGE (l)-[:ABOUT]->(x))
}
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
RETURN run.ledger_size AS size
