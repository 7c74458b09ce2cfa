// mode: write
// Empties the database (tests, benchmarks), one batch per call: relationships first,
// then nodes that have none left. A single transaction deleting a large graph (or a node
// with 100,000 relationships) exceeds Neo4j's transaction memory limit, and a driver's
// managed transaction may not use CALL { } IN TRANSACTIONS. The caller repeats it until
// it deletes nothing; the schema stays.
OPTIONAL MATCH ()-[r]->()
WITH r LIMIT $batch
WITH collect(r) AS links
FOREACH (x IN links | DELETE x)
WITH size(links) AS unlinked
OPTIONAL MATCH (n)
WHERE unlinked = 0
WITH unlinked, n LIMIT $batch
WITH unlinked, collect(n) AS nodes
FOREACH (x IN nodes | DELETE x)
RETURN unlinked + size(nodes) AS deleted
