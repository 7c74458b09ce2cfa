// needs: logs
// instead: WITH *
// Stores the log lines buffered since the run's last commit ($logs), inside the commit
// that carries them. Logs are observations: re-logging after a resume merges into the
// same entries, each linked to the goal it is ABOUT when that goal exists.
CALL {
  UNWIND $logs AS entry
  MERGE (l:LogEntry {id: entry.id})
  SET l += entry.props
  WITH l, entry
  OPTIONAL MATCH (about:Goal {id: entry.goal_id})
  FOREACH (x IN CASE WHEN about IS NULL THEN [] ELSE [about] END | MERGE (l)-[:ABOUT]->(x))
}
