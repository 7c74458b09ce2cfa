// mode: read
// Every resolver with its capabilities, costs and usage (the self-model's view).
MATCH (r:Resolver)
OPTIONAL MATCH (r)-[:PROVIDES]->(c:Capability)
WITH r, c
ORDER BY c.tag
WITH r, collect(c.tag) AS capabilities
RETURN r.id AS id, r.label AS label, r.type AS type, capabilities,
       coalesce(r.description, '') AS description,
       coalesce(r.cost_per_invocation, 0.0) AS cost_per_invocation,
       coalesce(r.cost_per_token, 0.0) AS cost_per_token,
       coalesce(r.latency_estimate, 0.0) AS latency_estimate,
       coalesce(r.usage_count, 0) AS usage_count, coalesce(r.success_count, 0) AS success_count,
       coalesce(r.failure_count, 0) AS failure_count, r.built_by AS built_by
ORDER BY id
