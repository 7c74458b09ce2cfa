// mode: write
// Gives the lease back, saying why the run stopped (null: it finished).
MATCH (run:Run {id: $run_id})
WHERE run.lease_holder = $holder
SET run.stopped = $stopped
FOREACH (removal IN [{lease_holder: null}, {lease_expires: null}] | SET run += removal)
RETURN run.id AS id
