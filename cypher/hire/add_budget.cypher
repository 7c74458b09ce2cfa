// mode: write
// Applies a human's budget answer: an allocation to the goal that no parent paid for,
// the request delivered, the goal's changes, in one commit.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id}), (q:CapabilityRequest {id: $request_id})
WHERE run.seq = $seq AND g.status = $status
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g += $changes,
    g.cost_allocated = g.cost_allocated + $cost, g.time_allocated = g.time_allocated + $time,
    q.status = 'delivered', q.answer = $answer, q.caption = 'delivered: ' + q.capability_tag
FOREACH (removal IN $removals | SET g += removal)
CREATE (e:BudgetEvent {id: $event_id, kind: 'allocate', goal_id: $goal_id, cost: $cost,
                       time: $time, seq: $seq, source_id: 'actor:human',
                       description: 'added by a human answering ' + $request_id,
                       caption: 'human grant $' + toString(toInteger(floor($cost / 1000000.0))) + '.' +
                               right('00000' + toString($cost - toInteger(floor($cost / 1000000.0)) * 1000000), 6)})
CREATE (e)-[:CHARGED_TO]->(g)
RETURN e.id AS id
