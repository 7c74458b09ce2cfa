// mode: read
// Step 10's mandatory lookup before building (B4): the registered tools that provide
// the capability with their record, every earlier build of it (any run; a failed one
// means the kernel does not build it again) and every request a human was asked for it.
OPTIONAL MATCH (r:Resolver)-[:PROVIDES]->(:Capability {tag: $tag})
WITH collect(DISTINCT CASE WHEN r IS NULL THEN null ELSE
       {id: r.id, usage: coalesce(r.usage_count, 0), successes: coalesce(r.success_count, 0),
        input_types: coalesce(r.input_types, [])} END) AS tools
OPTIONAL MATCH (b:Goal {builds_capability: $tag})
WHERE coalesce(b.stale, false) = false
WITH tools, collect(DISTINCT CASE WHEN b IS NULL THEN null ELSE
       {id: b.id, run_id: b.run_id, status: b.status} END) AS builds
OPTIONAL MATCH (q:CapabilityRequest {capability_tag: $tag})
RETURN tools, builds,
       collect(DISTINCT CASE WHEN q IS NULL THEN null ELSE
         {id: q.id, status: q.status, resolver_id: q.resolver_id} END) AS requests
