// mode: write
// cache: keep
// Appends one entry to a run's hash chain. Guarded by the run's current head and size,
// so two writers cannot both extend it.
MATCH (run:Run {id: $run_id})
WHERE coalesce(run.ledger_head, $genesis) = $prev_hash AND coalesce(run.ledger_size, 0) = $index
OPTIONAL MATCH (prev:LedgerEntry {id: $prev_id})
SET run.ledger_head = $hash, run.ledger_size = $index + 1
CREATE (e:LedgerEntry)
SET e = $props
CREATE (e)-[:RECORDED_IN]->(run)
FOREACH (x IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END | CREATE (e)-[:FOLLOWS]->(x))
RETURN e.id AS id
