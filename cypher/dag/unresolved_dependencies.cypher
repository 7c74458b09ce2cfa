// mode: read
// cache: read
// The dependencies of a goal that are not resolved yet (it is blocked while any remain).
MATCH (g:Goal {id: $goal_id})-[:DEPENDS_ON]->(d:Goal)
WHERE d.status <> 'resolved'
RETURN d.id AS id
ORDER BY id
