// mode: write
// The dispatch queue (and the proposals consumed) after a step whose last commit could
// not carry them. Guarded by the
// run's commit number (and does not advance it), so a process that lost the run writes
// nothing.
MATCH (run:Run {id: $run_id})
WHERE run.seq = $seq
SET run.queue = $queue, run.proposals = $proposals
RETURN run.seq AS seq
