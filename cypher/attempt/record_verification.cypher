// mode: write
// changes: goal/get(touched), attempt/of_goal(checked_below), constraint/of_goal(checked_below), constraint/ancestors_resolved(checked_below), artifact/by_key, dag/children, dag/unresolved_dependencies, goal/children_keys
// refreshes: goal/get
// Records a verification ($checked, see the store_verification fragment) as its own
// commit, when the step's move of its goal could not carry it. The commit also carries
// what the step made since the run's last commit: its artifacts ($artifacts), the spend
// that paid for the check ($spend), its log lines ($logs) and its ledger entries
// ($entries).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND $checked IS NOT NULL
  AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
// include: attempt_guard
// include: checked_guard
// include: spend_guard
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
// include: ledger_tip
// include: store_artifacts
// include: open_attempt
// include: store_spend
// include: store_verification
// include: store_logs
// include: store_entries
// include: goal_family
// include: spend_family
// include: goal_view
RETURN CASE WHEN spend_touched IS NULL THEN null ELSE spend_touched + checked_below END AS touched,
       checked_below, view
