// mode: write
// Appends a tiered log entry (tier 1 flow, 2 decision, 3 I/O metadata). Logs are
// observations, not commits: they do not advance the run, and re-logging after a
// resume merges into the same entry.
MATCH (run:Run {id: $run_id})
OPTIONAL MATCH (g:Goal {id: $goal_id})
MERGE (l:LogEntry {id: $log_id})
SET l += $props
FOREACH (x IN CASE WHEN g IS NULL THEN [] ELSE [g] END | MERGE (l)-[:ABOUT]->(x))
RETURN l.id AS id
