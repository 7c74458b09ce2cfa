// mode: read
// Spend by capability, in dollars and seconds: a call paid to a tool BUILD or HIRE added
// counts toward what that tool provides; any other call toward the capabilities its goal
// required (a goal requiring several counts toward each).
MATCH (e:BudgetEvent {kind: 'spend'})-[:CHARGED_TO]->(g:Goal)
OPTIONAL MATCH (tool:Resolver {id: e.resolver_id})
WHERE coalesce(tool.built_by, 'boot') <> 'boot'
OPTIONAL MATCH (tool)-[:PROVIDES]->(provided:Capability)
WITH e, g, collect(provided.tag) AS provides
UNWIND CASE WHEN size(provides) > 0 THEN provides
            ELSE coalesce(g.required_capabilities, ['unspecified']) END AS capability
RETURN capability, count(DISTINCT g) AS goals, sum(e.cost) / 1000000.0 AS usd,
       sum(e.time) / 1000.0 AS seconds
ORDER BY usd DESC, capability
