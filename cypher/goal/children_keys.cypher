// mode: read
// cache: read
// Live children of a goal by decomposition key (an interrupted decomposition is resumed).
MATCH (c:Goal)-[:CHILD_OF]->(g:Goal {id: $goal_id})
WHERE coalesce(c.stale, false) = false AND c.decomposition_key IS NOT NULL
RETURN c.decomposition_key AS decomposition_key, c.id AS id
ORDER BY id
