// mode: read
// A run's ledger in chain order, with the run's recorded head and size.
MATCH (run:Run {id: $run_id})
OPTIONAL MATCH (e:LedgerEntry {run_id: $run_id})
WITH run, e
ORDER BY e.index
RETURN run.ledger_head AS head, coalesce(run.ledger_size, 0) AS size,
       collect(properties(e)) AS entries
