// mode: write
// Benchmark (kernel bench kg): synthetic goal patterns with their embeddings.
UNWIND $rows AS row
CREATE (p:GoalPattern {id: row.id, summary: row.summary, caption: row.summary,
                       signature: row.signature})
SET p.embedding = vecf32(row.vector)
RETURN count(p) AS merged
