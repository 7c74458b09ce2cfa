// mode: write
// changes: nothing
// The dispatch queue (and the proposals consumed) after a step whose last commit could
// not carry them. Guarded by the
// run's commit number (and does not advance it), so a process that lost the run writes
// nothing.
// The log lines the step wrote since its last commit ($logs) are stored with it.
MATCH (run:Run {id: $run_id})
WHERE run.seq = $seq
SET run.queue = $queue, run.proposals = $proposals
WITH run
CALL {
  UNWIND $logs AS entry
  MERGE (l:LogEntry {id: entry.id})
  SET l += entry.props
  WITH l, entry
  OPTIONAL MATCH (about:Goal {id: entry.goal_id})
  FOREACH (x IN CASE WHEN about IS NULL THEN [] ELSE [about] END | MERGE (l)-[:ABOUT]->(x))
}
RETURN run.seq AS seq
