// mode: read
// cache: read
// Live siblings waiting on this goal (woken when it resolves).
MATCH (d:Goal)-[:DEPENDS_ON]->(g:Goal {id: $goal_id})
WHERE coalesce(d.stale, false) = false
RETURN d.id AS id
ORDER BY d.seq, id
