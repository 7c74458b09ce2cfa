// mode: write
// Benchmark: a single-node MERGE.
MERGE (n:Run {id: $id})
SET n.caption = $caption
RETURN n.id AS id
