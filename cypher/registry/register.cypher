// mode: write
// Registers (or refreshes) a resolver and its provides edges: one edge per capability
// tag it claims now; edges for tags it no longer claims are removed.
MERGE (r:Resolver {id: $id})
SET r += $props
WITH r
OPTIONAL MATCH (r)-[old:PROVIDES]->(c:Capability)
WHERE NOT c.tag IN $capabilities
DELETE old
WITH DISTINCT r
UNWIND (CASE WHEN size($capabilities) = 0 THEN [null] ELSE $capabilities END) AS tag
FOREACH (t IN CASE WHEN tag IS NULL THEN [] ELSE [tag] END |
  MERGE (c:Capability {id: 'capability:' + t})
  ON CREATE SET c.tag = t, c.caption = t
  MERGE (r)-[:PROVIDES]->(c))
RETURN r.id AS id, count(tag) AS capabilities
