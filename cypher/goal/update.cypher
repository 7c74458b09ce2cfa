// mode: write
// changes: goal/get, dag/children, dag/unresolved_dependencies, goal/children_keys
// Changes step fields of a goal that stays in $status (parking it on a request, adopting
// a tool), in one commit. No row comes back when the goal is not in $status.
// The log lines the step wrote since its last commit ($logs) are stored with it.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = $status
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g += $changes
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
RETURN g.status AS status
