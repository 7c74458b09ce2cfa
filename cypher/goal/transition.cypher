// mode: write
// changes: goal/get(touched), attempt/of_goal(attempts_touched), attempt/of_goal(checked_below), constraint/of_goal(checked_below), constraint/ancestors_resolved(checked_below), artifact/by_key, dag/children, dag/unresolved_dependencies, goal/children_keys
// refreshes: goal/get
// Moves a goal from $from to $to, with the step's field changes, in one commit.
// No row comes back when the goal is not in $from: nothing was written.
// The commit also carries what the step made since the run's last commit: its
// artifacts ($artifacts), the attempt it opened ($attempt), the spend that paid for
// its call ($spend), the verification of its last attempt ($checked: see the
// store_verification fragment), its log lines ($logs) and its ledger entries ($entries).
// A goal it resolves gives its unspent budget back to its parent ($return_id: see the
// return_unspent fragment).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index) AND g.status = $from
// include: attempt_guard
// include: spend_guard
// include: checked_guard
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = $to, g += $changes
// include: ledger_tip
FOREACH (removal IN $removals | SET g += removal)
// include: goal_labels
// include: store_artifacts
// include: open_attempt
// include: store_spend
// include: return_unspent
// include: store_verification
// include: store_logs
// include: store_entries
// include: goal_family
// include: spend_family
// include: goal_view
RETURN g.status AS status,
       CASE WHEN spend_touched IS NULL OR budget_returned THEN null
            ELSE spend_touched + checked_below END AS touched,
       attempts_touched, checked_below, view
