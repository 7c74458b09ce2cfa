// mode: write
// changes: goal/get(touched), dag/children, dag/unresolved_dependencies, goal/children_keys
// refreshes: goal/get
// Moves a goal from $from to $to, with the step's field changes, in one commit.
// No row comes back when the goal is not in $from: nothing was written.
// The log lines the step wrote since its last commit ($logs) are stored with it.
// The ledger entries made since the last commit ($entries) are chained and stored with it.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index) AND g.status = $from
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = $to, g += $changes
// include: ledger_tip
FOREACH (removal IN $removals | SET g += removal)
WITH g
// include: store_logs
// include: store_entries
// include: goal_family
// include: goal_view
RETURN g.status AS status, touched, view
