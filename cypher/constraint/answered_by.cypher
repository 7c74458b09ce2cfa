// mode: read
// Who answers for the constraints a part of a decomposition works under: each of its
// parent's selected constraints, with the live parts of that decomposition its parent
// gave it to (role 'owed'; none: the whole answers for it). Empty for a root.
MATCH (g:Goal {id: $goal_id})-[:CHILD_OF]->(p:Goal)
MATCH (p)-[selected:HAS_CONSTRAINT]->(c:Constraint)
WHERE 'selected' IN selected.roles
OPTIONAL MATCH (c)<-[owed:HAS_CONSTRAINT]-(s:Goal)-[:CHILD_OF]->(p)
WHERE 'owed' IN owed.roles AND coalesce(s.stale, false) = false
RETURN c.id AS id, p.summary AS parent, collect(DISTINCT [s.id, s.summary]) AS parts
ORDER BY id
