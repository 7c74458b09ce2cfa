// mode: write
// Applies a human's refusal: the request is declined (never asked again) and the goal
// is infeasible, in one commit.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id}), (q:CapabilityRequest {id: $request_id})
WHERE run.seq = $seq AND g.status = $status
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = 'infeasible',
    q.status = 'declined', q.answer = $answer, q.caption = 'declined: ' + q.capability_tag
FOREACH (removal IN [{awaiting: null}] | SET g += removal)
// include: goal_labels
RETURN g.status AS status
