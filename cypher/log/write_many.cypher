// mode: write
// cache: keep
// Stores buffered log lines that no commit carried (a step that ended without one, the
// end of a run). Logs are observations: re-logging after a resume merges into the same
// entries.
MATCH (run:Run {id: $run_id})
CALL {
  UNWIND $logs AS entry
  MERGE (l:LogEntry {id: entry.id})
  SET l += entry.props
  WITH l, entry
  OPTIONAL MATCH (about:Goal {id: entry.goal_id})
  FOREACH (x IN CASE WHEN about IS NULL THEN [] ELSE [about] END | MERGE (l)-[:ABOUT]->(x))
}
RETURN run.id AS id
