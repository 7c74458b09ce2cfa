// mode: read
// The capability request with this fingerprint, if one was ever raised.
MATCH (q:CapabilityRequest {fingerprint: $fingerprint})
RETURN properties(q) AS request
