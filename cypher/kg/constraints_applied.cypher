// mode: read
// Boot query (step 2): the constraints selected for goals whose patterns are near a
// summary embedding (before identification the goal has no signature to filter by),
// grouped by title (one line per kind of constraint, however its parameters varied),
// most used first. Similarity (1 + cos) / 2 on both stores.
// include: goal_patterns_near
WHERE similarity >= $threshold
MATCH (g:Goal)-[:INSTANCE_OF]->(node)
MATCH (g)-[h:HAS_CONSTRAINT]->(c:Constraint)
WHERE 'selected' IN h.roles
WITH c.title AS title, c.type AS type, c.domain AS domain, min(c.id) AS id,
     count(DISTINCT g) AS goals, max(similarity) AS similarity
RETURN id, title, type, domain, goals, similarity
ORDER BY goals DESC, similarity DESC, id
LIMIT $k
