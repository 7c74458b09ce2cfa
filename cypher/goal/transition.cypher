// mode: write
// changes: goal/get(touched), attempt/of_goal(attempts_touched), artifact/by_key, dag/children, dag/unresolved_dependencies, goal/children_keys
// refreshes: goal/get
// Moves a goal from $from to $to, with the step's field changes, in one commit.
// No row comes back when the goal is not in $from: nothing was written.
// The commit also carries what the step made since the run's last commit: its
// artifacts ($artifacts), the attempt it opened ($attempt), the spend that paid for
// its call ($spend), its log lines ($logs) and its ledger entries ($entries).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index) AND g.status = $from
// include: attempt_guard
// include: spend_guard
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = $to, g += $changes
// include: ledger_tip
FOREACH (removal IN $removals | SET g += removal)
// include: store_artifacts
// include: open_attempt
// include: store_spend
// include: store_logs
// include: store_entries
// include: goal_family
// include: spend_family
// include: goal_view
RETURN g.status AS status, spend_touched AS touched, attempts_touched, view
