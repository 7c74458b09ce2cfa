// mode: read
// Every live goal of a run with its dependencies (for whole-tree order and critical path).
MATCH (c:Goal {run_id: $run_id})
WHERE coalesce(c.stale, false) = false
RETURN c.id AS id, c.seq AS seq, c.status AS status, c.time_allocated AS time_allocated,
       [(c)-[:DEPENDS_ON]->(d:Goal) | d.id] AS depends_on
ORDER BY seq, id
