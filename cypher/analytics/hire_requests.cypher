// mode: read
// Every HIRE request, why it was raised, how it ended and which tool answered it.
MATCH (q:CapabilityRequest)
OPTIONAL MATCH (q)-[:ANSWERED_BY]->(r:Resolver)
OPTIONAL MATCH (q)-[:RAISED_FOR]->(g:Goal)
RETURN q.id AS request, q.capability_tag AS capability, q.reason AS reason,
       q.status AS status, r.id AS answered_by, count(DISTINCT g) AS goals_waiting_or_served
ORDER BY request
