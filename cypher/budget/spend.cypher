// mode: write
// changes: goal/get(touched), attempt/of_goal(attempts_touched), artifact/by_key, dag/children, dag/unresolved_dependencies, goal/children_keys
// refreshes: goal/get
// Records what a call cost ($spend, see the store_spend fragment) as its own commit,
// when no step commit of its goal could carry it. The commit also carries the
// artifacts ($artifacts) and the attempt ($attempt) made since the run's last commit,
// which the spend may pay for, its log lines ($logs) and its ledger entries ($entries).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
// include: attempt_guard
// include: spend_guard
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
// include: ledger_tip
// include: store_artifacts
// include: open_attempt
// include: store_spend
// include: store_logs
// include: store_entries
// include: goal_family
// include: spend_family
// include: goal_view
RETURN spend_touched AS touched, attempts_touched, view
