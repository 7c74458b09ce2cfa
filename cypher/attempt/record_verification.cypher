// mode: write
// changes: goal/get(touched), attempt/of_goal(touched), constraint/of_goal(touched), constraint/ancestors_resolved, artifact/by_key, dag/children, dag/unresolved_dependencies, goal/children_keys
// refreshes: goal/get
// Attaches a verification to the attempt and the goal; on SAT the selected constraints
// become resolved, on UNSAT resolved ones are cleared. Each failed check is an edge the
// attempt VIOLATED, each passed one an edge its output artifact SATISFIES, both with the
// check that decided and its sigma; a cause a check diagnosed itself (a forged or
// missing test report) is linked as the failure mode (a model's diagnosis comes later).
// The resolver that made the attempt SUCCEEDED_ON or FAILED_ON the goal's pattern (one
// edge per attempt, with sigma_v, cost, time, modality and input constraint signature), and its usage statistics
// and quality move with the outcome: executability is the smoothed pass rate,
// completeness the smoothed mean sigma_v (each starts at the 0.5 prior).
// The sigma_path values the verification changes ($sigma_paths: the goal's subtree) are
// written with it, and so is what the step made since the run's last commit: its
// artifacts ($artifacts), the spend that paid for the check ($spend), its log lines
// ($logs) and its ledger entries ($entries).
MATCH (run:Run {id: $run_id}), (a:Attempt {id: $attempt_id})-[:FOR]->(g:Goal {id: $goal_id})
WHERE run.seq = $seq AND a.verdict IS NULL AND g.last_attempt_id = a.id
  AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
// include: attempt_guard
// include: spend_guard
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    a.verification = $verification, a.verdict = $verdict, a.sigma_v = $sigma_v,
    a.failure_mode = $failure_mode, a.caption = coalesce(a.caption, 'attempt') + ': ' + $verdict,
    g.verification = $verification, g.sigma_v = $sigma_v
// include: ledger_tip
// include: store_artifacts
// include: open_attempt
// include: store_spend
WITH a, g, spend_grant
CALL {
  UNWIND $sigma_paths AS row
  MATCH (below:Goal {id: row.id})
  SET below.sigma_path = row.sigma_path
}
WITH a, g, spend_grant
OPTIONAL MATCH (g)-[old:HAS_CONSTRAINT {id: 'resolved'}]->(:Constraint)
DELETE old
WITH DISTINCT a, g, spend_grant
FOREACH (_ IN CASE WHEN $failure_mode IS NULL THEN [] ELSE [1] END |
  MERGE (f:FailureMode {id: $failure_mode})
  ON CREATE SET f.name = $failure_slug, f.slug = $failure_slug, f.caption = $failure_slug,
                f.description = $failure_description, f.source = 'check'
  MERGE (a)-[b:FAILED_BECAUSE]->(f)
  SET b.source = 'check', b.name = $failure_slug)
WITH a, g, spend_grant
OPTIONAL MATCH (a)-[:USED]->(r:Resolver)
OPTIONAL MATCH (p:GoalPattern {id: g.pattern_id})
WITH a, g, spend_grant, r, p, coalesce(r.usage_count, 0) AS n, coalesce(r.avg_cost_micros, 0.0) AS spent,
     coalesce(r.q_executability, 0.5) AS qe, coalesce(r.q_completeness, 0.5) AS qc,
     CASE WHEN $verdict = 'SAT' THEN 1 ELSE 0 END AS won
FOREACH (x IN CASE WHEN r IS NULL THEN [] ELSE [r] END |
  SET x.usage_count = n + 1, x.success_count = coalesce(x.success_count, 0) + won,
      x.failure_count = coalesce(x.failure_count, 0) + 1 - won,
      x.avg_cost_micros = (spent * n + coalesce(a.cost, 0)) / (n + 1),
      x.q_executability = (qe * (n + 1) + won) / (n + 2),
      x.q_completeness = (qc * (n + 1) + $sigma_v) / (n + 2))
FOREACH (_ IN CASE WHEN r IS NULL OR p IS NULL OR $verdict <> 'SAT' THEN [] ELSE [1] END |
  CREATE (r)-[:SUCCEEDED_ON {id: a.id, sigma_v: $sigma_v, cost: coalesce(a.cost, 0),
                             time: coalesce(a.time, 0), modality: g.modality,
                             input_signature: p.signature}]->(p))
FOREACH (_ IN CASE WHEN r IS NULL OR p IS NULL OR $verdict = 'SAT' THEN [] ELSE [1] END |
  CREATE (r)-[:FAILED_ON {id: a.id, sigma_v: $sigma_v, cost: coalesce(a.cost, 0),
                          time: coalesce(a.time, 0), modality: g.modality,
                          input_signature: p.signature, failure_mode: $failure_mode}]->(p))
WITH DISTINCT a, g, spend_grant
UNWIND (CASE WHEN size($outcomes) = 0 THEN [null] ELSE $outcomes END) AS o
OPTIONAL MATCH (k:Constraint {id: o.constraint_id})
OPTIONAL MATCH (art:Artifact {id: a.output_artifact_id})
FOREACH (x IN CASE WHEN k IS NULL OR o.passed THEN [] ELSE [k] END |
  MERGE (a)-[v:VIOLATED]->(x)
  SET v.check = o.check, v.sigma = o.sigma)
FOREACH (x IN CASE WHEN k IS NULL OR art IS NULL OR NOT o.passed THEN [] ELSE [k] END |
  MERGE (art)-[s:SATISFIES {attempt_id: a.id}]->(x)
  SET s.check = o.check, s.sigma = o.sigma)
WITH DISTINCT a, g, spend_grant
OPTIONAL MATCH (g)-[:HAS_CONSTRAINT {id: 'selected'}]->(c:Constraint)
WHERE $verdict = 'SAT'
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END |
  MERGE (g)-[h:HAS_CONSTRAINT {id: 'resolved'}]->(x)
  SET h.role = 'resolved')
WITH a, g, spend_grant, count(c) AS resolved
// include: store_logs
// include: store_entries
// include: goal_family
// include: spend_family
// include: goal_view
RETURN a.id AS id, resolved,
       CASE WHEN spend_touched IS NULL THEN null
            ELSE spend_touched + [row IN $sigma_paths | row.id] END AS touched, view
