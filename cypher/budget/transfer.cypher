// mode: write
// Moves budget from a parent to its child: one allocate event drawn from the parent.
// Refused (no row) unless the parent still has it.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})-[:CHILD_OF]->(p:Goal)
WHERE run.seq = $seq
  AND p.cost_allocated + p.cost_refunded - p.cost_spent - p.cost_granted >= $cost
  AND p.time_allocated + p.time_refunded - p.time_spent - p.time_granted >= $time
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    g.cost_allocated = g.cost_allocated + $cost, g.time_allocated = g.time_allocated + $time,
    p.cost_granted = p.cost_granted + $cost, p.time_granted = p.time_granted + $time
CREATE (e:BudgetEvent {id: $event_id, kind: 'allocate', goal_id: $goal_id, source_id: p.id,
                       cost: $cost, time: $time, seq: $seq, description: $description,
                       caption: 'grant $' + toString(toInteger(floor($cost / 1000000.0))) + '.' +
                               right('00000' + toString($cost - toInteger(floor($cost / 1000000.0)) * 1000000), 6)})
CREATE (e)-[:CHARGED_TO]->(g)
CREATE (e)-[:DRAWN_FROM]->(p)
RETURN e.id AS id
