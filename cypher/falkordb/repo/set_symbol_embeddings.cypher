// mode: write
// Each symbol's embedding (name, signature, docstring), as vecf32 for the index.
UNWIND $rows AS row
MATCH (s:Symbol {id: row.id})
SET s.embedding = vecf32(row.vector)
RETURN count(s) AS embedded
