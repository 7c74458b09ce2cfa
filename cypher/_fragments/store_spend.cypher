// needs: spend
// instead: WITH *, false AS spend_grant
// Pays for a call on the goal bound as `g` inside the commit that carries the spend
// ($spend: null, or its cost and time, resolver, operation, the attempt and output it
// paid for, the proposal, and the ids of its event and of a grant). The attempt (and,
// with an output, the attempt's and the goal's output) record it; the attempt and the
// resolver PRODUCED the output. An overrun beyond the goal's remaining budget is drawn
// from its parent when the parent can cover it; otherwise the goal is marked over
// budget. The attempt and output may be created earlier in the same statement, so they
// are matched here, outside the subquery that writes (spend_guard checked they would
// be). Binds `spend_grant`: the parent covered an overrun.
// Plain calls paid before it on the same goal ($spend.earlier: no attempt, no output,
// each with its event id) ride with it: the run let them wait only while the goal's
// remaining budget covered them, so every spend is charged first and what the goal then
// lacks is the last spend's overrun.
WITH *
CALL {
  WITH g
  UNWIND (CASE WHEN $spend IS NULL THEN [] ELSE coalesce($spend.earlier, []) + [$spend] END) AS sp
  SET g.cost_spent = g.cost_spent + sp.cost, g.time_spent = g.time_spent + sp.time
  CREATE (s:BudgetEvent {id: sp.event_id, kind: 'spend', goal_id: g.id, cost: sp.cost, time: sp.time,
                         resolver_id: sp.resolver_id, operation: sp.operation, seq: $seq,
                         proposal: sp.proposal,
                         caption: 'spend $' + toString(toInteger(floor(sp.cost / 1000000.0))) + '.' +
                                  right('00000' + toString(sp.cost - toInteger(floor(sp.cost / 1000000.0)) * 1000000), 6)})
  CREATE (s)-[:CHARGED_TO]->(g)
}
// What was paid also counts toward the run's totals, split by who was paid (the sandbox
// that runs tests, a tool BUILD or HIRE added, or the model: any other boot resolver),
// and toward `subtree_cost_spent` of the goal and of every goal above it.
CALL {
  WITH g
  UNWIND (CASE WHEN $spend IS NULL THEN [] ELSE coalesce($spend.earlier, []) + [$spend] END) AS sp
  OPTIONAL MATCH (paid_to:Resolver {id: sp.resolver_id})
  WITH g, sp.cost AS cost,
       CASE WHEN sp.resolver_id = 'resolver:codex-tools-0' THEN 'sandbox'
            WHEN coalesce(paid_to.built_by, 'boot') <> 'boot' THEN 'tool'
            ELSE 'model' END AS part
  WITH g, toInteger(sum(cost)) AS paid,
       toInteger(sum(CASE WHEN part = 'model' THEN cost ELSE 0 END)) AS model,
       toInteger(sum(CASE WHEN part = 'sandbox' THEN cost ELSE 0 END)) AS sandbox,
       toInteger(sum(CASE WHEN part = 'tool' THEN cost ELSE 0 END)) AS tool
  MATCH (spender:Run {id: g.run_id})
  SET spender.cost_spent = coalesce(spender.cost_spent, 0) + paid,
      spender.cost_spent_model = coalesce(spender.cost_spent_model, 0) + model,
      spender.cost_spent_sandbox = coalesce(spender.cost_spent_sandbox, 0) + sandbox,
      spender.cost_spent_tool = coalesce(spender.cost_spent_tool, 0) + tool
  WITH g, paid
  MATCH (g)-[:CHILD_OF*0..]->(up:Goal)
  SET up.subtree_cost_spent = coalesce(up.subtree_cost_spent, 0) + paid
}
WITH *
OPTIONAL MATCH (paying:BudgetEvent {id: $spend.event_id})
OPTIONAL MATCH (paid:Attempt {id: $spend.attempt_id})-[:FOR]->(g)
OPTIONAL MATCH (paid_out:Artifact {id: $spend.output_artifact_id})
OPTIONAL MATCH (payer:Goal)<-[:CHILD_OF]-(g)
OPTIONAL MATCH (maker:Resolver {id: $spend.resolver_id})
WITH *,
     CASE WHEN $spend IS NULL THEN 0
          ELSE 0 - (g.cost_allocated + g.cost_refunded - g.cost_spent - g.cost_granted) END AS spend_cost_short,
     CASE WHEN $spend IS NULL THEN 0
          ELSE 0 - (g.time_allocated + g.time_refunded - g.time_spent - g.time_granted) END AS spend_time_short
WITH *,
     CASE WHEN spend_cost_short > 0 THEN spend_cost_short ELSE 0 END AS spend_cost_over,
     CASE WHEN spend_time_short > 0 THEN spend_time_short ELSE 0 END AS spend_time_over
WITH *,
     (spend_cost_over > 0 OR spend_time_over > 0) AS spend_overrun,
     payer IS NOT NULL
     AND payer.cost_allocated + payer.cost_refunded - payer.cost_spent - payer.cost_granted >= spend_cost_over
     AND payer.time_allocated + payer.time_refunded - payer.time_spent - payer.time_granted >= spend_time_over
     AS spend_covered
WITH *, spend_overrun AND spend_covered AS spend_grant
CALL {
  WITH g, paying, paid, paid_out, payer, maker, spend_cost_over, spend_time_over, spend_overrun, spend_grant
  UNWIND (CASE WHEN $spend IS NULL THEN [] ELSE [$spend] END) AS sp
  FOREACH (x IN CASE WHEN paid IS NULL THEN [] ELSE [paid] END |
    CREATE (paying)-[:PAYS_FOR]->(x)
    SET x.cost = x.cost + sp.cost, x.time = x.time + sp.time)
  FOREACH (x IN CASE WHEN paid_out IS NULL OR paid IS NULL THEN [] ELSE [paid_out] END |
    SET paid.output_artifact_id = x.id, g.output_artifact_id = x.id
    MERGE (paid)-[:PRODUCED]->(x))
  FOREACH (x IN CASE WHEN paid_out IS NULL OR paid IS NULL OR maker IS NULL THEN [] ELSE [paid_out] END |
    MERGE (maker)-[:PRODUCED]->(x))
  FOREACH (_ IN CASE WHEN spend_grant THEN [1] ELSE [] END |
    SET g.cost_allocated = g.cost_allocated + spend_cost_over,
        g.time_allocated = g.time_allocated + spend_time_over,
        payer.cost_granted = payer.cost_granted + spend_cost_over,
        payer.time_granted = payer.time_granted + spend_time_over
    CREATE (t:BudgetEvent {id: sp.grant_id, kind: 'allocate', goal_id: g.id, source_id: payer.id,
                           cost: spend_cost_over, time: spend_time_over, seq: $seq,
                           description: 'overrun covered by parent',
                           caption: 'grant $' + toString(toInteger(floor(spend_cost_over / 1000000.0))) + '.' +
                                    right('00000' + toString(spend_cost_over - toInteger(floor(spend_cost_over / 1000000.0)) * 1000000), 6)})
    CREATE (t)-[:CHARGED_TO]->(g)
    CREATE (t)-[:DRAWN_FROM]->(payer))
  SET g.over_budget = coalesce(g.over_budget, false) OR (spend_overrun AND NOT spend_grant)
}
