// mode: write
// changes: goal/get, dag/children, dag/unresolved_dependencies, goal/children_keys
// Moves a goal from $from to $to, with the step's field changes, in one commit.
// No row comes back when the goal is not in $from: nothing was written.
// The log lines the step wrote since its last commit ($logs) are stored with it.
// The ledger entries made since the last commit ($entries) are chained and stored with it.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index) AND g.status = $from
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = $to, g += $changes
FOREACH (tip IN CASE WHEN size($entries) = 0 THEN [] ELSE [last($entries).props] END |
  SET run.ledger_head = tip.hash, run.ledger_size = tip.index + 1)
FOREACH (removal IN $removals | SET g += removal)
WITH g
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
RETURN g.status AS status
