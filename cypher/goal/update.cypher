// mode: write
// Changes step fields of a goal that stays in $status (parking it on a request, adopting
// a tool), in one commit. No row comes back when the goal is not in $status.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = $status
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g += $changes
RETURN g.status AS status
