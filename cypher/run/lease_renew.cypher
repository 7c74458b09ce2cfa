// mode: write
// Extends the lease its holder still holds (no row: it was taken over).
MATCH (run:Run {id: $run_id})
WHERE run.lease_holder = $holder
SET run.lease_expires = $expires
RETURN run.lease_expires AS expires
