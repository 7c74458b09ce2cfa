// mode: read
// What the self-model reads before BUILD: the registered resolvers that write code
// (the kernel's builders) and the most recent finished builds of any capability, each
// with what its subtree spent and whether it gave a tool.
OPTIONAL MATCH (r:Resolver)-[:PROVIDES]->(:Capability {tag: $builder_tag})
WITH collect(DISTINCT r.id) AS builders
OPTIONAL MATCH (b:Goal {purpose: 'build'})
WHERE b.status IN ['resolved', 'infeasible'] AND coalesce(b.stale, false) = false
WITH builders, b
ORDER BY b.id DESC
LIMIT $rows
OPTIONAL MATCH (d:Goal)-[:CHILD_OF*0..]->(b)
WITH builders, b, sum(coalesce(d.cost_spent, 0)) AS cost, sum(coalesce(d.time_spent, 0)) AS time
RETURN builders,
       collect(CASE WHEN b IS NULL THEN null ELSE
         {id: b.id, status: b.status, cost: cost, time: time} END) AS builds
