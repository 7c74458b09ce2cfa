// mode: write
// Starts attempt number attempt_count + 1 of a goal (at most max_attempts), keeping
// attempt_count and last_attempt_id in step with the attempts in the same commit.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.attempt_count + 1 = $attempt_index
  AND $attempt_index <= g.max_attempts
OPTIONAL MATCH (r:Resolver {id: $resolver_id})
SET run.seq = $seq + 1, run.proposals = $proposals, g.attempt_count = $attempt_index, g.last_attempt_id = $attempt_id
CREATE (a:Attempt)
SET a = $props
CREATE (a)-[:FOR]->(g)
FOREACH (x IN CASE WHEN r IS NULL THEN [] ELSE [r] END | CREATE (a)-[:USED]->(x))
RETURN a.id AS id
