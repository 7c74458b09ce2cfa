// mode: write
// The run's whole budget, allocated to its root goal.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    g.cost_allocated = g.cost_allocated + $cost, g.time_allocated = g.time_allocated + $time
CREATE (e:BudgetEvent {id: $event_id, kind: 'allocate', goal_id: $goal_id, cost: $cost,
                       time: $time, seq: $seq, description: $description,
                       caption: 'allocate $' + toString(toInteger(floor($cost / 1000000.0))) + '.' +
                               right('00000' + toString($cost - toInteger(floor($cost / 1000000.0)) * 1000000), 6)})
CREATE (e)-[:CHARGED_TO]->(g)
RETURN e.id AS id
