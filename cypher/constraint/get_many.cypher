// mode: read
// cache: immutable
// Constraints by id.
MATCH (c:Constraint)
WHERE c.id IN $ids
RETURN c.id AS id, c.type AS type, c.domain AS domain, c.title AS title,
       c.payload AS payload, c.provenance AS provenance
ORDER BY c.id
