// mode: read
// One resolver with the capabilities it provides.
MATCH (r:Resolver {id: $id})
OPTIONAL MATCH (r)-[:PROVIDES]->(c:Capability)
WITH r, c
ORDER BY c.tag
RETURN properties(r) AS resolver, collect(c.tag) AS capabilities
