// mode: read
// Failure modes per resolver and proposer: which tool (driven by which script or
// model) fails for which diagnosed cause, most frequent first.
MATCH (a:Attempt)-[:FAILED_BECAUSE]->(f:FailureMode)
MATCH (a)-[:USED]->(r:Resolver)
OPTIONAL MATCH (a)-[:PROPOSED_BY]->(who:Actor)
RETURN r.id AS resolver, coalesce(who.name, 'unknown') AS proposer, f.name AS cause,
       count(a) AS attempts
ORDER BY attempts DESC, resolver, proposer, cause
