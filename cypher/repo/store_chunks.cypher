// mode: write
// A large file's text by line ranges, each chunk held by its file.
UNWIND $rows AS row
MATCH (f:File {id: row.file_id})
MERGE (c:Chunk {id: row.id})
SET c += row.props
MERGE (f)-[:HOLDS]->(c)
RETURN count(c) AS merged
