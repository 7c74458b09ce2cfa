// mode: read
// A run's budget ledger.
MATCH (e:BudgetEvent)-[:CHARGED_TO]->(g:Goal {run_id: $run_id})
RETURN e.id AS id, e.kind AS kind, g.id AS goal_id, e.source_id AS source_id, e.cost AS cost,
       e.time AS time, e.operation AS operation
ORDER BY id
