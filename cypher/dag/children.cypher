// mode: read
// cache: read
// The live children of a goal's decomposition and the dependencies among them (a build
// subgoal is not part of the decomposition).
MATCH (c:Goal)-[:CHILD_OF]->(p:Goal {id: $goal_id})
WHERE coalesce(c.stale, false) = false AND coalesce(c.purpose, 'solve') <> 'build'
RETURN c.id AS id, c.seq AS seq, c.status AS status, c.time_allocated AS time_allocated,
       [(c)-[:DEPENDS_ON]->(d:Goal) | d.id] AS depends_on
ORDER BY seq, id
