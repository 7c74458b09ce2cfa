// mode: read
// Failure modes per resolver: which tool fails how, most frequent first.
MATCH (a:Attempt)-[:FAILED_BECAUSE]->(f:FailureMode)
MATCH (a)-[:USED]->(r:Resolver)
RETURN r.id AS resolver, f.id AS failure_mode, count(a) AS attempts
ORDER BY attempts DESC, resolver, failure_mode
