// mode: write
// changes: goal/get, dag/children, dag/unresolved_dependencies, goal/children_keys
// Moves a goal from $from to $to, with the step's field changes, in one commit.
// No row comes back when the goal is not in $from: nothing was written.
// The log lines the step wrote since its last commit ($logs) are stored with it.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = $from
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = $to, g += $changes
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
