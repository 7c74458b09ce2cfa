// mode: write
// changes: nothing
// The dispatch queue (and the proposals consumed) after a step whose last commit could
// not carry them. Guarded by the
// run's commit number (and does not advance it), so a process that lost the run writes
// nothing.
// The log lines the step wrote since its last commit ($logs) are stored with it.
// The ledger entries made since the last commit ($entries) are chained and stored with it.
MATCH (run:Run {id: $run_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
SET run.queue = $queue, run.proposals = $proposals
// include: ledger_tip
WITH run
// include: store_logs
// include: store_entries
RETURN run.seq AS seq
