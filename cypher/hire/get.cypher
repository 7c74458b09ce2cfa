// mode: read
// One capability request.
MATCH (q:CapabilityRequest {id: $id})
RETURN properties(q) AS request
