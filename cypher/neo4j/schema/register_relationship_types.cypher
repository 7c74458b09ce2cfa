// mode: write
// Makes Neo4j know every relationship type of the ontology ($types) before any edge of
// it exists: an edge made and deleted in one transaction leaves the type's name
// registered. Without it a query naming such a type (a starter query of the Browser
// guide, say, on a graph that has had no build yet) is answered with a warning that the
// type does not exist. Dynamic types need Neo4j 5.26.
CREATE (n:SchemaInfo {id: 'schema:relationship-types'})
WITH n
UNWIND $types AS type
CREATE (n)-[r:$(type)]->(n)
DELETE r
WITH DISTINCT n
DELETE n
RETURN 1 AS registered
