// mode: read
// The live leaves of a run's tree and their path confidence (sigma_system = min).
MATCH (g:Goal {run_id: $run_id})
WHERE coalesce(g.stale, false) = false
OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(g)
WHERE coalesce(c.stale, false) = false
WITH g, count(c) AS children
WHERE children = 0
RETURN g.id AS id, g.sigma_path AS sigma_path
ORDER BY id
