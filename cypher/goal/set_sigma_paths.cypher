// mode: write
// changes: goal/get
// Writes recomputed sigma_path values for a subtree in one commit.
MATCH (run:Run {id: $run_id})
WHERE run.seq = $seq
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
WITH run
UNWIND $rows AS row
MATCH (g:Goal {id: row.id})
SET g.sigma_path = row.sigma_path
RETURN run.seq AS seq, count(g) AS updated
