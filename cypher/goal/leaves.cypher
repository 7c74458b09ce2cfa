// mode: read
// The live leaves of a run's tree and their path confidence (sigma_system = min).
MATCH (g:Goal {run_id: $run_id})
WHERE coalesce(g.stale, false) = false
  AND size([(c:Goal)-[:CHILD_OF]->(g) WHERE coalesce(c.stale, false) = false | 1]) = 0
RETURN g.id AS id, g.sigma_path AS sigma_path
ORDER BY g.id
