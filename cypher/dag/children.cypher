// mode: read
// The live children of a goal and the dependencies among them.
MATCH (c:Goal)-[:CHILD_OF]->(p:Goal {id: $goal_id})
WHERE coalesce(c.stale, false) = false
RETURN c.id AS id, c.seq AS seq, c.status AS status, c.time_allocated AS time_allocated,
       [(c)-[:DEPENDS_ON]->(d:Goal) | d.id] AS depends_on
ORDER BY seq, id
