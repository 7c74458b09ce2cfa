// mode: read
// Failure modes by frequency: how many failed attempts each one explains, and on how
// many goals. Paste into Neo4j Browser as-is.
MATCH (a:Attempt)-[:FAILED_BECAUSE]->(f:FailureMode)
RETURN f.id AS failure_mode, count(a) AS attempts, count(DISTINCT a.goal_id) AS goals
ORDER BY attempts DESC, failure_mode
