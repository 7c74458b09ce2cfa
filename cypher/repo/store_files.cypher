// mode: write
// Files of a snapshot (new or changed), each held by its repository.
UNWIND $rows AS row
MATCH (r:Repository {id: row.repo})
MERGE (f:File {id: row.id})
SET f += row.props
MERGE (r)-[:HOLDS]->(f)
RETURN count(f) AS merged
