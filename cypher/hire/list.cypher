// mode: read
// Capability requests (all, or those in $statuses) with the goals waiting on them.
MATCH (q:CapabilityRequest)
WHERE size($statuses) = 0 OR q.status IN $statuses
OPTIONAL MATCH (q)-[:RAISED_FOR]->(g:Goal)
WITH q, g
ORDER BY g.seq
RETURN properties(q) AS request,
       collect({id: g.id, run_id: g.run_id, summary: g.summary, status: g.status}) AS goals
ORDER BY request.seq, request.id
