// mode: write
// changes: goal/get(touched), attempt/of_goal(touched), dag/children, dag/unresolved_dependencies, goal/children_keys
// refreshes: goal/get
// Records what a call cost, in the same commit as what it paid for: with $attempt_id
// it pays for that attempt (and, with $output_artifact_id, records the attempt's
// output on the attempt and the goal; the attempt and the resolver PRODUCED it). An overrun beyond the goal's remaining budget
// is drawn from its parent when the parent can cover it; otherwise the goal is marked
// over budget.
// With $to it also moves the goal from $from to $to with the step's $changes (no row
// comes back when the goal is not in $from): a spend rides its step's transition.
// The log lines the step wrote since its last commit ($logs) are stored with it.
// The ledger entries made since the last commit ($entries) are chained and stored with it.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
  AND ($to IS NULL OR g.status = $from)
OPTIONAL MATCH (g)-[:CHILD_OF]->(p:Goal)
OPTIONAL MATCH (a:Attempt {id: $attempt_id})-[:FOR]->(g)
OPTIONAL MATCH (out:Artifact {id: $output_artifact_id})
OPTIONAL MATCH (r:Resolver {id: $resolver_id})
WITH run, g, p, a, out, r,
     g.cost_allocated + g.cost_refunded - g.cost_spent - g.cost_granted AS cost_left,
     g.time_allocated + g.time_refunded - g.time_spent - g.time_granted AS time_left
WHERE ($attempt_id IS NULL OR a IS NOT NULL)
  AND ($output_artifact_id IS NULL OR (a IS NOT NULL AND out IS NOT NULL))
WITH run, g, p, a, out, r,
     CASE WHEN $cost > cost_left THEN $cost - cost_left ELSE 0 END AS cost_over,
     CASE WHEN $time > time_left THEN $time - time_left ELSE 0 END AS time_over
WITH run, g, p, a, out, r, cost_over, time_over,
     (cost_over > 0 OR time_over > 0) AS overrun,
     p IS NOT NULL
     AND p.cost_allocated + p.cost_refunded - p.cost_spent - p.cost_granted >= cost_over
     AND p.time_allocated + p.time_refunded - p.time_spent - p.time_granted >= time_over
     AS parent_covers
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    g.cost_spent = g.cost_spent + $cost, g.time_spent = g.time_spent + $time,
    g.status = coalesce($to, g.status), g += $changes
FOREACH (removal IN $removals | SET g += removal)
// include: ledger_tip
CREATE (s:BudgetEvent {id: $event_id, kind: 'spend', goal_id: g.id, cost: $cost, time: $time,
                       resolver_id: $resolver_id, operation: $operation, seq: $seq,
                       proposal: $proposal, caption: 'spend $' + toString(toInteger(floor($cost / 1000000.0))) + '.' +
                               right('00000' + toString($cost - toInteger(floor($cost / 1000000.0)) * 1000000), 6)})
CREATE (s)-[:CHARGED_TO]->(g)
FOREACH (x IN CASE WHEN a IS NULL THEN [] ELSE [a] END |
  CREATE (s)-[:PAYS_FOR]->(x)
  SET x.cost = x.cost + $cost, x.time = x.time + $time)
FOREACH (x IN CASE WHEN out IS NULL THEN [] ELSE [out] END |
  SET a.output_artifact_id = x.id, g.output_artifact_id = x.id
  MERGE (a)-[:PRODUCED]->(x))
FOREACH (x IN CASE WHEN out IS NULL OR r IS NULL THEN [] ELSE [out] END |
  MERGE (r)-[:PRODUCED]->(x))
FOREACH (_ IN CASE WHEN overrun AND parent_covers THEN [1] ELSE [] END |
  SET g.cost_allocated = g.cost_allocated + cost_over,
      g.time_allocated = g.time_allocated + time_over,
      p.cost_granted = p.cost_granted + cost_over, p.time_granted = p.time_granted + time_over
  CREATE (t:BudgetEvent {id: $grant_id, kind: 'allocate', goal_id: g.id, source_id: p.id,
                         cost: cost_over, time: time_over, seq: $seq,
                         description: 'overrun covered by parent',
                         caption: 'grant $' + toString(toInteger(floor(cost_over / 1000000.0))) + '.' +
                               right('00000' + toString(cost_over - toInteger(floor(cost_over / 1000000.0)) * 1000000), 6)})
  CREATE (t)-[:CHARGED_TO]->(g)
  CREATE (t)-[:DRAWN_FROM]->(p))
SET g.over_budget = coalesce(g.over_budget, false) OR (overrun AND NOT parent_covers)
WITH s, g, overrun, parent_covers
// include: store_logs
// include: store_entries
// include: goal_family
OPTIONAL MATCH (below:Goal)-[:CHILD_OF]->(g)
// A grant changes the parent's budget, which every sibling's view shows: drop them all.
WITH s, g, overrun, parent_covers, touched, collect(below.id) AS below
WITH s, g, overrun, parent_covers,
     CASE WHEN overrun AND parent_covers THEN null ELSE touched + below END AS touched
// include: goal_view
RETURN s.id AS id, overrun, parent_covers, touched, view
