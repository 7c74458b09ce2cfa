// mode: write
// changes: goal/get(touched), attempt/of_goal(touched)
// refreshes: goal/get
// Starts attempt number attempt_count + 1 of a goal (at most max_attempts), keeping
// attempt_count and last_attempt_id in step with the attempts in the same commit. The
// attempt is TRIED_FOR the goal's pattern, USED_CONSTRAINT each selected constraint, and
// PROPOSED_BY the run's proposer (whose kind and model it also carries).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.attempt_count + 1 = $attempt_index
  AND $attempt_index <= g.max_attempts
OPTIONAL MATCH (r:Resolver {id: $resolver_id})
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.attempt_count = $attempt_index, g.last_attempt_id = $attempt_id
CREATE (a:Attempt)
SET a = $props
CREATE (a)-[:FOR]->(g)
FOREACH (x IN CASE WHEN r IS NULL THEN [] ELSE [r] END | CREATE (a)-[:USED]->(x))
SET a.run_id = run.id, a.proposer = run.proposer, a.model = run.model
WITH a, g, run
OPTIONAL MATCH (run)-[:PROPOSED_BY]->(who:Actor)
FOREACH (x IN CASE WHEN who IS NULL THEN [] ELSE [who] END | CREATE (a)-[:PROPOSED_BY]->(x))
WITH DISTINCT a, g
OPTIONAL MATCH (p:GoalPattern {id: g.pattern_id})
FOREACH (x IN CASE WHEN p IS NULL THEN [] ELSE [p] END | CREATE (a)-[:TRIED_FOR]->(x))
WITH DISTINCT a, g
OPTIONAL MATCH (g)-[h:HAS_CONSTRAINT]->(c:Constraint)
WHERE h.role = 'selected'
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END | CREATE (a)-[:USED_CONSTRAINT]->(x))
WITH DISTINCT a, g
// include: goal_view
RETURN a.id AS id, [g.id] AS touched, view
