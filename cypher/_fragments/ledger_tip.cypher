// needs: entries
// Moves the run's stored ledger head and size (bound as `run`) to the last of the
// entries ($entries) this commit stores; with no entries it changes nothing.
FOREACH (tip IN CASE WHEN size($entries) = 0 THEN [] ELSE [last($entries).props] END |
  SET run.ledger_head = tip.hash, run.ledger_size = tip.index + 1)
