// mode: write
// Each symbol's embedding (name, signature, docstring).
UNWIND $rows AS row
MATCH (s:Symbol {id: row.id})
SET s.embedding = row.vector
RETURN count(s) AS embedded
