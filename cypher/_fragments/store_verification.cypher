// needs: checked
// instead: WITH *, [] AS checked_below
// Records a verification ($checked: null, or the attempt it judges, the verification as
// JSON, its verdict and sigma_v, a failure mode a check diagnosed itself, one outcome per
// check and the sigma_path values it changes) on the goal bound as `g`, inside the commit
// that carries it (checked_guard held). The attempt and the goal take the verdict; on SAT
// the selected constraints become resolved, on UNSAT resolved ones are cleared. Each
// failed check is an edge the attempt VIOLATED, each passed one an edge its output
// artifact SATISFIES, both with the check that decided and its sigma; a cause a check
// diagnosed itself (a forged or missing test report) is linked as the failure mode (a
// model's diagnosis comes later). Each diagnostic (a failing test, a file the edits
// leave unparseable: severity, file, line, code, message) is a Diagnostic node the
// attempt REPORTED. The resolver that made the attempt SUCCEEDED_ON or
// FAILED_ON the goal's pattern (one edge per attempt, with sigma_v, cost, time, modality
// and input constraint signature), and its usage statistics and quality move with the
// outcome: executability is the smoothed pass rate, completeness the smoothed mean
// sigma_v (each starts at the 0.5 prior). Binds `checked_below`: the goal and its
// descendants (whose sigma_path and inherited constraints it can change) when a
// verification was recorded, otherwise an empty list.
WITH *
CALL {
  WITH g
  UNWIND (CASE WHEN $checked IS NULL THEN [] ELSE $checked.sigma_paths END) AS row
  MATCH (below:Goal {id: row.id})
  SET below.sigma_path = row.sigma_path
}
WITH *
CALL {
  WITH g
  UNWIND (CASE WHEN $checked IS NULL THEN [] ELSE [$checked] END) AS chk
  MATCH (a:Attempt {id: chk.attempt_id})-[:FOR]->(g)
  SET a.verification = chk.verification, a.verdict = chk.verdict, a.sigma_v = chk.sigma_v,
      a.failure_mode = chk.failure_mode,
      a.caption = coalesce(a.caption, 'attempt') + ': ' + chk.verdict,
      g.verification = chk.verification, g.sigma_v = chk.sigma_v
  REMOVE a:Sat:Unsat
  FOREACH (_ IN CASE WHEN chk.verdict = 'SAT' THEN [1] ELSE [] END | SET a:Sat)
  FOREACH (_ IN CASE WHEN chk.verdict = 'UNSAT' THEN [1] ELSE [] END | SET a:Unsat)
  FOREACH (_ IN CASE WHEN chk.failure_mode IS NULL THEN [] ELSE [1] END |
    MERGE (f:FailureMode {id: chk.failure_mode})
    ON CREATE SET f.name = chk.failure_slug, f.slug = chk.failure_slug,
                  f.caption = chk.failure_slug, f.description = chk.failure_description,
                  f.source = 'check'
    MERGE (a)-[b:FAILED_BECAUSE]->(f)
    SET b.source = 'check', b.name = chk.failure_slug)
  WITH a, g, chk
  OPTIONAL MATCH (a)-[:USED]->(r:Resolver)
  OPTIONAL MATCH (p:GoalPattern {id: g.pattern_id})
  WITH a, g, chk, r, p, coalesce(r.usage_count, 0) AS n,
       coalesce(r.avg_cost_micros, 0.0) AS spent,
       coalesce(r.q_executability, 0.5) AS qe, coalesce(r.q_completeness, 0.5) AS qc,
       CASE WHEN chk.verdict = 'SAT' THEN 1 ELSE 0 END AS won
  FOREACH (x IN CASE WHEN r IS NULL THEN [] ELSE [r] END |
    SET x.usage_count = n + 1, x.success_count = coalesce(x.success_count, 0) + won,
        x.failure_count = coalesce(x.failure_count, 0) + 1 - won,
        x.avg_cost_micros = (spent * n + coalesce(a.cost, 0)) / (n + 1),
        x.q_executability = (qe * (n + 1) + won) / (n + 2),
        x.q_completeness = (qc * (n + 1) + chk.sigma_v) / (n + 2))
  FOREACH (_ IN CASE WHEN r IS NULL OR p IS NULL OR chk.verdict <> 'SAT' THEN [] ELSE [1] END |
    CREATE (r)-[:SUCCEEDED_ON {id: a.id, sigma_v: chk.sigma_v, cost: coalesce(a.cost, 0),
                               time: coalesce(a.time, 0), modality: g.modality,
                               input_signature: p.signature}]->(p))
  FOREACH (_ IN CASE WHEN r IS NULL OR p IS NULL OR chk.verdict = 'SAT' THEN [] ELSE [1] END |
    CREATE (r)-[:FAILED_ON {id: a.id, sigma_v: chk.sigma_v, cost: coalesce(a.cost, 0),
                            time: coalesce(a.time, 0), modality: g.modality,
                            input_signature: p.signature,
                            failure_mode: chk.failure_mode}]->(p))
}
WITH *
CALL {
  WITH g
  UNWIND (CASE WHEN $checked IS NULL THEN [] ELSE coalesce($checked.diagnostics, []) END) AS d
  MATCH (a:Attempt {id: $checked.attempt_id})
  MERGE (x:Diagnostic {id: d.id})
  SET x.attempt_id = a.id, x.severity = d.severity, x.file = d.file, x.line = d.line,
      x.code = d.code, x.message = d.message, x.caption = d.caption
  MERGE (a)-[:REPORTED]->(x)
}
WITH *
CALL {
  WITH g
  UNWIND (CASE WHEN $checked IS NULL THEN [] ELSE $checked.outcomes END) AS o
  MATCH (a:Attempt {id: $checked.attempt_id})
  MATCH (k:Constraint {id: o.constraint_id})
  OPTIONAL MATCH (art:Artifact {id: a.output_artifact_id})
  FOREACH (x IN CASE WHEN o.passed THEN [] ELSE [k] END |
    MERGE (a)-[v:VIOLATED]->(x)
    SET v.check = o.check, v.sigma = o.sigma)
  FOREACH (x IN CASE WHEN art IS NULL OR NOT o.passed THEN [] ELSE [k] END |
    MERGE (art)-[s:SATISFIES {attempt_id: a.id}]->(x)
    SET s.check = o.check, s.sigma = o.sigma)
}
WITH *
CALL {
  WITH g
  UNWIND (CASE WHEN $checked IS NULL THEN [] ELSE [$checked] END) AS chk
  OPTIONAL MATCH (g)-[h:HAS_CONSTRAINT]->(:Constraint)
  WHERE 'resolved' IN h.roles OR (chk.verdict = 'SAT' AND 'selected' IN h.roles)
  FOREACH (e IN CASE WHEN h IS NULL THEN [] ELSE [h] END |
    SET e.roles = [k IN ['core', 'eligible', 'selected', 'inherited', 'resolved', 'coupling', 'owed']
                   WHERE (k IN e.roles AND k <> 'resolved')
                      OR (k = 'resolved' AND chk.verdict = 'SAT' AND 'selected' IN e.roles)])
  WITH DISTINCT g
  OPTIONAL MATCH (g)-[bare:HAS_CONSTRAINT]->(:Constraint)
  WHERE size(bare.roles) = 0
  DELETE bare
}
WITH *
CALL {
  WITH g
  OPTIONAL MATCH (d:Goal)-[:CHILD_OF*0..]->(g)
  WHERE $checked IS NOT NULL
  RETURN collect(DISTINCT d.id) AS checked_below
}
