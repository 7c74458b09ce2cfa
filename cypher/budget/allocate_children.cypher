// mode: write
// Splits a parent's allocatable budget among its children in one commit (all or none).
MATCH (run:Run {id: $run_id}), (p:Goal {id: $goal_id})
WHERE run.seq = $seq
  AND p.cost_allocated + p.cost_refunded - p.cost_spent - p.cost_granted >= $total_cost
  AND p.time_allocated + p.time_refunded - p.time_spent - p.time_granted >= $total_time
OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(p)
WHERE c.id IN $child_ids
WITH run, p, count(c) AS found
WHERE found = size($child_ids) AND found = size($rows)
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    p.cost_granted = p.cost_granted + $total_cost, p.time_granted = p.time_granted + $total_time
WITH p
UNWIND $rows AS row
MATCH (c:Goal {id: row.child_id})-[:CHILD_OF]->(p)
SET c.cost_allocated = c.cost_allocated + row.cost, c.time_allocated = c.time_allocated + row.time
CREATE (e:BudgetEvent {id: row.event_id, kind: 'allocate', goal_id: c.id, source_id: p.id,
                       cost: row.cost, time: row.time, seq: $seq, weight: row.weight,
                       description: 'allocation from parent',
                       caption: 'grant $' + toString(toInteger(floor(row.cost / 1000000.0))) + '.' +
                               right('00000' + toString(row.cost - toInteger(floor(row.cost / 1000000.0)) * 1000000), 6)})
CREATE (e)-[:CHARGED_TO]->(c)
CREATE (e)-[:DRAWN_FROM]->(p)
RETURN p.id AS parent_id, count(e) AS allocated
