// mode: read
// Spend by the capability each goal required (a goal requiring several counts toward
// each), in dollars and seconds.
MATCH (e:BudgetEvent {kind: 'spend'})-[:CHARGED_TO]->(g:Goal)
UNWIND coalesce(g.required_capabilities, ['unspecified']) AS capability
RETURN capability, count(DISTINCT g) AS goals, sum(e.cost) / 1000000.0 AS usd,
       sum(e.time) / 1000.0 AS seconds
ORDER BY usd DESC, capability
