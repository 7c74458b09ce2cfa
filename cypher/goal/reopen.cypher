// mode: write
// Backtracking: reopens a goal and invalidates its subtree. Descendants lose their
// outputs, verification, resolved constraints, confidence and dependencies and go
// back to pending (marked stale); their attempts and logs stay. What each descendant
// had not spent goes back to the reopened goal (a refund event charged to it and drawn
// from the descendant), so its next decomposition has it to allocate.
MATCH (run:Run {id: $run_id}), (u:Goal {id: $goal_id})
WHERE run.seq = $seq AND u.status IN $from_states
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), u.status = $to, u += $changes
FOREACH (removal IN $removals | SET u += removal)
REMOVE u:Resolved:Failed:Parked
FOREACH (_ IN CASE WHEN u.status = 'resolved' THEN [1] ELSE [] END | SET u:Resolved)
FOREACH (_ IN CASE WHEN u.status = 'gated' THEN [1] ELSE [] END | SET u:Parked)
WITH u
OPTIONAL MATCH (w:Goal)-[:CHILD_OF*1..]->(u)
WITH u, collect(DISTINCT w) AS subtree
WITH u, subtree,
     [w IN subtree | w.cost_allocated + w.cost_refunded - w.cost_spent - w.cost_granted]
       AS cost_raw,
     [w IN subtree | w.time_allocated + w.time_refunded - w.time_spent - w.time_granted]
       AS time_raw
WITH u, subtree,
     [x IN cost_raw | CASE WHEN x > 0 THEN x ELSE 0 END] AS cost_left,
     [x IN time_raw | CASE WHEN x > 0 THEN x ELSE 0 END] AS time_left
SET u.cost_refunded = u.cost_refunded + reduce(s = 0, x IN cost_left | s + x),
    u.time_refunded = u.time_refunded + reduce(s = 0, x IN time_left | s + x)
FOREACH (i IN [i IN range(0, size(subtree) - 1) WHERE cost_left[i] > 0 OR time_left[i] > 0] |
  FOREACH (w IN [subtree[i]] |
    CREATE (e:BudgetEvent {id: $event_id + ':' + w.id, kind: 'refund', goal_id: u.id,
                           source_id: w.id, cost: cost_left[i], time: time_left[i],
                           seq: $seq, description: 'unspent budget of an invalidated subgoal',
                           caption: 'refund $' + toString(toInteger(floor(cost_left[i] / 1000000.0))) + '.' +
                               right('00000' + toString(cost_left[i] - toInteger(floor(cost_left[i] / 1000000.0)) * 1000000), 6)})
    CREATE (e)-[:CHARGED_TO]->(u)
    CREATE (e)-[:DRAWN_FROM]->(w)
    SET w.cost_granted = w.cost_granted + cost_left[i],
        w.time_granted = w.time_granted + time_left[i]))
FOREACH (w IN subtree |
  SET w.status = 'pending', w.stale = true, w.invalidated_at_seq = $seq, w:Stale
  REMOVE w:Resolved:Failed:Parked
  FOREACH (removal IN [{output_artifact_id: null}, {verification: null}, {sigma_v: null},
                       {sigma_path: null}] | SET w += removal))
WITH u, subtree
UNWIND (CASE WHEN size(subtree) = 0 THEN [null] ELSE subtree END) AS w
OPTIONAL MATCH (w)-[resolved:HAS_CONSTRAINT {id: 'resolved'}]->(:Constraint)
DELETE resolved
WITH u, subtree, w
OPTIONAL MATCH (w)-[dep:DEPENDS_ON]->(:Goal)
DELETE dep
RETURN u.status AS status, size(subtree) AS invalidated
