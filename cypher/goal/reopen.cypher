// mode: write
// Backtracking: reopens a goal and invalidates its subtree. Descendants lose their
// outputs, verification, resolved constraints, confidence and dependencies and go
// back to pending (marked stale); their attempts and logs stay. What each descendant
// had not spent goes back to the reopened goal (a refund event charged to it and drawn
// from the descendant), so its next decomposition has it to allocate.
// What consumed the old outputs is redone too: an ancestor that had resolved goes back
// to pending (composed again once the reopened goal resolves), and every live goal that
// depends, directly or through others, on the reopened goal or on such an ancestor, and
// had started, goes back to pending without its output, decompositions or subtree (made
// stale), with one more attempt: it waits for what it depends on and resolves again
// from what that ships then.
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
WITH u, subtree
OPTIONAL MATCH (u)-[:CHILD_OF*1..]->(a:Goal)
WHERE a.status = 'resolved'
WITH u, subtree, collect(DISTINCT a) AS above
FOREACH (a IN above | SET a.status = 'pending' REMOVE a:Resolved)
WITH u, subtree, [u.id] + [a IN above | a.id] AS from_ids, [s IN subtree | s.id] AS subtree_ids
MATCH (x:Goal)
WHERE x.id IN from_ids
OPTIONAL MATCH (d:Goal)-[:DEPENDS_ON*1..]->(x)
WHERE coalesce(d.stale, false) = false AND NOT d.id IN subtree_ids
  AND (d.status <> 'pending' OR d.output_artifact_id IS NOT NULL
       OR coalesce(d.decompositions, 0) > 0)
WITH u, subtree, subtree_ids, collect(DISTINCT d) AS redone
UNWIND ([u] + redone) AS top
OPTIONAL MATCH (w:Goal)-[:CHILD_OF*1..]->(top)
WITH u, subtree, subtree_ids, redone, collect(DISTINCT w) AS under
WITH u, size(subtree) AS invalidated, redone,
     subtree + [w IN under WHERE NOT w.id IN subtree_ids] AS stale_now
FOREACH (w IN stale_now |
  SET w.status = 'pending', w.stale = true, w.invalidated_at_seq = $seq, w:Stale
  REMOVE w:Resolved:Failed:Parked
  FOREACH (removal IN [{output_artifact_id: null}, {verification: null}, {sigma_v: null},
                       {sigma_path: null}] | SET w += removal))
FOREACH (x IN redone |
  SET x.status = 'pending', x.decompositions = 0,
      x.max_attempts = coalesce(x.attempt_count, 0) + 1
  REMOVE x:Resolved:Failed:Parked
  FOREACH (removal IN [{output_artifact_id: null}, {verification: null}, {sigma_v: null},
                       {sigma_path: null}, {leaf_kind: null}] | SET x += removal))
WITH u, invalidated, [x IN redone | x.id] AS redone, stale_now + redone AS changed
UNWIND (CASE WHEN size(changed) = 0 THEN [null] ELSE changed END) AS w
OPTIONAL MATCH (w)-[resolved:HAS_CONSTRAINT]->(:Constraint)
WHERE 'resolved' IN resolved.roles
FOREACH (e IN CASE WHEN resolved IS NULL THEN [] ELSE [resolved] END |
  SET e.roles = [x IN e.roles WHERE x <> 'resolved'])
WITH DISTINCT u, invalidated, redone, w
OPTIONAL MATCH (w)-[bare:HAS_CONSTRAINT]->(:Constraint)
WHERE size(bare.roles) = 0
DELETE bare
WITH DISTINCT u, invalidated, redone, w
OPTIONAL MATCH (w)-[dep:DEPENDS_ON]->(:Goal)
WHERE coalesce(w.stale, false) = true
DELETE dep
RETURN DISTINCT u.status AS status, invalidated, redone
