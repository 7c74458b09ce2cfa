// mode: read
// cache: read
// A goal's constraints with the roles they play (core, eligible, selected, inherited, resolved).
MATCH (g:Goal {id: $goal_id})-[h:HAS_CONSTRAINT]->(c:Constraint)
UNWIND h.roles AS role
RETURN role, c.id AS id, c.type AS type, c.domain AS domain
ORDER BY role, id
