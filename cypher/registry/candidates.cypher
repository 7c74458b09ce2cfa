// mode: read
// Resolvers that provide any of the wanted capabilities (all resolvers when none are
// named) and accept the modality, with what the kernel ranks them by.
MATCH (r:Resolver)
WHERE $modality IS NULL OR $modality IN coalesce(r.input_types, [])
OPTIONAL MATCH (r)-[:PROVIDES]->(c:Capability)
WHERE c.tag IN $capabilities
WITH r, count(c) AS matched
WHERE matched > 0 OR size($capabilities) = 0
RETURN r.id AS id, r.label AS label, matched,
       coalesce(r.usage_count, 0) AS usage_count, coalesce(r.success_count, 0) AS success_count,
       [coalesce(r.q_completeness, 0.5), coalesce(r.q_executability, 0.5),
        coalesce(r.q_optimality, 0.5), coalesce(r.q_representation, 0.5),
        coalesce(r.q_generalization, 0.5), coalesce(r.q_efficiency, 0.5)] AS quality,
       coalesce(r.cost_per_invocation, 0.0) AS cost_per_invocation,
       coalesce(r.cost_per_token, 0.0) AS cost_per_token
