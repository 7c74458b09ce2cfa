// needs: attempt
// instead: WITH *
// Opens the attempt begun since the run's last commit ($attempt: null, or its index,
// id, resolver and properties) on the goal bound as `g`, whose attempt_count and
// last_attempt_id move with it (the statement's WHERE includes attempt_guard). The
// attempt is TRIED_FOR the goal's pattern, USED_CONSTRAINT each selected constraint,
// USED its resolver and is PROPOSED_BY the run's proposer (whose kind and model it
// also carries).
WITH *
CALL {
  WITH run, g
  UNWIND (CASE WHEN $attempt IS NULL THEN [] ELSE [$attempt] END) AS opening
  SET g.attempt_count = opening.attempt_index, g.last_attempt_id = opening.id
  CREATE (opened:Attempt)
  SET opened = opening.props
  CREATE (opened)-[:FOR]->(g)
  SET opened.run_id = run.id, opened.proposer = run.proposer, opened.model = run.model
  WITH run, g, opened, opening
  OPTIONAL MATCH (opened_with:Resolver {id: opening.resolver_id})
  FOREACH (x IN CASE WHEN opened_with IS NULL THEN [] ELSE [opened_with] END |
    CREATE (opened)-[:USED]->(x))
  WITH DISTINCT run, g, opened
  OPTIONAL MATCH (run)-[:PROPOSED_BY]->(who:Actor)
  FOREACH (x IN CASE WHEN who IS NULL THEN [] ELSE [who] END | CREATE (opened)-[:PROPOSED_BY]->(x))
  WITH DISTINCT g, opened
  OPTIONAL MATCH (tried:GoalPattern {id: g.pattern_id})
  FOREACH (x IN CASE WHEN tried IS NULL THEN [] ELSE [tried] END | CREATE (opened)-[:TRIED_FOR]->(x))
  WITH DISTINCT g, opened
  OPTIONAL MATCH (g)-[h:HAS_CONSTRAINT]->(used:Constraint)
  WHERE 'selected' IN h.roles
  FOREACH (x IN CASE WHEN used IS NULL THEN [] ELSE [used] END |
    CREATE (opened)-[:USED_CONSTRAINT]->(x))
}
