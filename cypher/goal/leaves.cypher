// mode: read
// The live leaves of a run's solution tree and their path confidence (sigma_system =
// min). Build subgoals made tools, not parts of the solution: they are not leaves.
MATCH (g:Goal {run_id: $run_id})
WHERE coalesce(g.stale, false) = false AND coalesce(g.purpose, 'solve') <> 'build'
OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(g)
WHERE coalesce(c.stale, false) = false AND coalesce(c.purpose, 'solve') <> 'build'
WITH g, count(c) AS children
WHERE children = 0
RETURN g.id AS id, g.sigma_path AS sigma_path
ORDER BY id
