// mode: read
// A goal's budget derived from the ledger alone (the caches must agree with it).
MATCH (g:Goal {id: $goal_id})
OPTIONAL MATCH (e:BudgetEvent)-[:CHARGED_TO]->(g)
WITH g, collect(e) AS own
OPTIONAL MATCH (out:BudgetEvent)-[:DRAWN_FROM]->(g)
WITH g, own, collect(out) AS granted
RETURN
  toInteger(reduce(s = 0, e IN own | s + CASE e.kind WHEN 'allocate' THEN e.cost ELSE 0 END))
    AS cost_allocated,
  toInteger(reduce(s = 0, e IN own | s + CASE e.kind WHEN 'spend' THEN e.cost ELSE 0 END))
    AS cost_spent,
  toInteger(reduce(s = 0, e IN own | s + CASE e.kind WHEN 'refund' THEN e.cost ELSE 0 END))
    AS cost_refunded,
  toInteger(reduce(s = 0, e IN granted | s + e.cost)) AS cost_granted,
  toInteger(reduce(s = 0, e IN own | s + CASE e.kind WHEN 'allocate' THEN e.time ELSE 0 END))
    AS time_allocated,
  toInteger(reduce(s = 0, e IN own | s + CASE e.kind WHEN 'spend' THEN e.time ELSE 0 END))
    AS time_spent,
  toInteger(reduce(s = 0, e IN own | s + CASE e.kind WHEN 'refund' THEN e.time ELSE 0 END))
    AS time_refunded,
  toInteger(reduce(s = 0, e IN granted | s + e.time)) AS time_granted,
  g.cost_allocated AS cache_cost_allocated, g.cost_spent AS cache_cost_spent,
  g.cost_refunded AS cache_cost_refunded, g.cost_granted AS cache_cost_granted,
  g.time_allocated AS cache_time_allocated, g.time_spent AS cache_time_spent,
  g.time_refunded AS cache_time_refunded, g.time_granted AS cache_time_granted
