// mode: read
// cache: read
// Union of the resolved constraints of a goal and all its ancestors (what a child inherits).
MATCH (g:Goal {id: $goal_id})-[:CHILD_OF*0..]->(a:Goal)
MATCH (a)-[h:HAS_CONSTRAINT]->(c:Constraint)
WHERE 'resolved' IN h.roles
RETURN DISTINCT c.id AS id
ORDER BY id
