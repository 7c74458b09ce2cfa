// mode: write
// Benchmark: many goals of one run in one statement (ids, parents and dependencies given).
UNWIND $rows AS row
CREATE (g:Goal {id: row.id, run_id: $run_id, parent_id: row.parent_id, seq: row.seq,
                depth: row.depth, status: 'pending', summary: row.id,
                time_allocated: row.time})
RETURN count(g) AS merged
