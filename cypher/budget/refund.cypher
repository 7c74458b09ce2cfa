// mode: write
// Credits a goal (e.g. a call charged but not performed).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    g.cost_refunded = g.cost_refunded + $cost, g.time_refunded = g.time_refunded + $time
CREATE (e:BudgetEvent {id: $event_id, kind: 'refund', goal_id: $goal_id, cost: $cost,
                       time: $time, seq: $seq, description: $description,
                       caption: 'refund $' + toString(toInteger(floor($cost / 1000000.0))) + '.' +
                               right('00000' + toString($cost - toInteger(floor($cost / 1000000.0)) * 1000000), 6)})
CREATE (e)-[:CHARGED_TO]->(g)
RETURN e.id AS id
