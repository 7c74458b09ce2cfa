// mode: write
// Gives the lease back, saying why the run stopped (null: it finished).
MATCH (run:Run {id: $run_id})
WHERE run.lease_holder = $holder
SET run.lease_holder = null, run.lease_expires = null, run.stopped = $stopped
RETURN run.id AS id
