// mode: write
// The symbols a file defines (functions, methods, classes, tests).
UNWIND $rows AS row
MATCH (f:File {id: row.file_id})
MERGE (s:Symbol {id: row.id})
SET s += row.props
MERGE (f)-[:DEFINES]->(s)
RETURN count(s) AS merged
