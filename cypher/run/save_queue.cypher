// mode: write
// The dispatch queue after a step whose last commit could not carry it. Guarded by the
// run's commit number (and does not advance it), so a process that lost the run writes
// nothing.
MATCH (run:Run {id: $run_id})
WHERE run.seq = $seq
SET run.queue = $queue
RETURN run.seq AS seq
