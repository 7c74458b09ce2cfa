// mode: write
// Benchmark: a batched MERGE of many nodes in one statement.
UNWIND $rows AS row
MERGE (n:Run {id: row.id})
SET n.caption = row.caption
RETURN count(n) AS merged
