// mode: write
// changes: goal/get(touched)
// refreshes: goal/get
// Writes recomputed sigma_path values for a subtree in one commit, and returns the
// view of the step's goal ($goal_id, one of them).
MATCH (run:Run {id: $run_id})
WHERE run.seq = $seq
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
WITH run
UNWIND $rows AS row
MATCH (g:Goal {id: row.id})
SET g.sigma_path = row.sigma_path
WITH run, count(g) AS updated
MATCH (g:Goal {id: $goal_id})
// include: goal_view
RETURN run.seq AS seq, updated, [row IN $rows | row.id] AS touched, view
