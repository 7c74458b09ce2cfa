// mode: write
// Migration 4: what each run spent, split by who was paid (as the store_spend fragment
// counts it from then on), and each goal's `subtree_cost_spent`, from the budget ledger
// and the goals' own spends.
MATCH (r:Run)
WHERE r.cost_spent IS NULL
OPTIONAL MATCH (e:BudgetEvent {kind: 'spend'})-[:CHARGED_TO]->(:Goal {run_id: r.id})
OPTIONAL MATCH (paid_to:Resolver {id: e.resolver_id})
WITH r, coalesce(e.cost, 0) AS cost,
     CASE WHEN e.resolver_id = 'resolver:codex-tools-0' THEN 'sandbox'
          WHEN coalesce(paid_to.built_by, 'boot') <> 'boot' THEN 'tool'
          ELSE 'model' END AS part
WITH r, toInteger(sum(cost)) AS paid,
     toInteger(sum(CASE WHEN part = 'model' THEN cost ELSE 0 END)) AS model,
     toInteger(sum(CASE WHEN part = 'sandbox' THEN cost ELSE 0 END)) AS sandbox,
     toInteger(sum(CASE WHEN part = 'tool' THEN cost ELSE 0 END)) AS tool
SET r.cost_spent = paid, r.cost_spent_model = model, r.cost_spent_sandbox = sandbox,
    r.cost_spent_tool = tool
WITH count(r) AS runs
MATCH (a:Goal)
WHERE a.subtree_cost_spent IS NULL
OPTIONAL MATCH (d:Goal)-[:CHILD_OF*0..]->(a)
WITH runs, a, toInteger(sum(coalesce(d.cost_spent, 0))) AS below
SET a.subtree_cost_spent = below
RETURN runs, count(a) AS goals
