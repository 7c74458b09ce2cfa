// mode: write
// changes: artifact/by_key
// Registers the artifacts made since the run's last commit ($artifacts, see the
// store_artifacts fragment; their bytes are already in the content-addressed store) as
// their own commit, when the run's next commit could not carry them.
// The ledger entries made since the last commit ($entries) are chained and stored with it.
MATCH (run:Run {id: $run_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
// include: ledger_tip
// include: store_artifacts
// include: store_entries
RETURN size($artifacts) AS registered
