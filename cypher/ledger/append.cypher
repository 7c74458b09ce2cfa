// mode: write
// cache: keep
// Stores ledger entries no commit carried (a run that stops, a refusal read back), with
// the log lines pending beside them. Guarded by the chain's stored head and size, so two
// writers cannot both extend it; each entry FOLLOWS the one before it.
MATCH (run:Run {id: $run_id})
WHERE coalesce(run.ledger_head, $genesis) = $entries[0].props.prev_hash
  AND coalesce(run.ledger_size, 0) = $entries[0].props.index
SET run.ledger_head = last($entries).props.hash, run.ledger_size = last($entries).props.index + 1
WITH run
// include: store_logs
// include: store_entries
RETURN run.ledger_size AS size
