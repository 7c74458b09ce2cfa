// mode: write
// Benchmark (kernel bench kg): synthetic constraints and failure modes.
UNWIND $rows AS row
CREATE (c:Constraint {id: row.id, title: row.title, type: row.type, domain: row.domain})
WITH row
CREATE (f:FailureMode {id: row.failure, slug: row.slug})
RETURN count(f) AS merged
