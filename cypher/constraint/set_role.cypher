// mode: write
// changes: goal/get(touched), attempt/of_goal(attempts_touched), artifact/by_key, dag/children, dag/unresolved_dependencies, goal/children_keys, constraint/of_goal(roles_touched), constraint/ancestors_resolved
// refreshes: goal/get
// Gives a set of constraints one role on a goal (replacing that role's previous set),
// moving the goal's status and writing the step's other fields in the same commit. A goal
// has one HAS_CONSTRAINT edge per constraint, its roles a list in the kernel's order
// (kernel.core.constraints.ROLES); an edge left with no role is deleted.
// With $pattern (step 2: see the store_pattern fragment) the commit stores the goal's
// pattern with its SIMILAR_TO links, and the goal becomes an INSTANCE_OF it, which
// REQUIRES the capabilities the step identified.
// The commit also carries what the step made since the run's last commit: the
// constraints it identified ($constraints, stored by content id), its artifacts
// ($artifacts), the spend that paid for its call ($spend), its log lines ($logs) and its
// ledger entries ($entries).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = $from
  AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
// include: attempt_guard
// include: spend_guard
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = $to, g += $changes
// include: ledger_tip
FOREACH (removal IN $removals | SET g += removal)
// include: goal_labels
// include: store_constraints
// include: store_artifacts
// include: open_attempt
// include: store_spend
// include: store_pattern
WITH g, spend_grant
OPTIONAL MATCH (p:GoalPattern {id: $pattern.id})
FOREACH (x IN CASE WHEN p IS NULL THEN [] ELSE [p] END | MERGE (g)-[:INSTANCE_OF]->(x))
WITH DISTINCT g, spend_grant, p
UNWIND (CASE WHEN p IS NULL OR size($capabilities) = 0 THEN [null] ELSE $capabilities END) AS tag
OPTIONAL MATCH (cap:Capability {id: 'capability:' + tag})
FOREACH (x IN CASE WHEN cap IS NULL OR p IS NULL THEN [] ELSE [cap] END |
  MERGE (p)-[:REQUIRES]->(x))
WITH DISTINCT g, spend_grant
OPTIONAL MATCH (g)-[old:HAS_CONSTRAINT]->(k:Constraint)
WHERE $role IN old.roles AND NOT k.id IN $ids
FOREACH (e IN CASE WHEN old IS NULL THEN [] ELSE [old] END |
  SET e.roles = [x IN e.roles WHERE x <> $role])
WITH DISTINCT g, spend_grant
OPTIONAL MATCH (g)-[bare:HAS_CONSTRAINT]->(:Constraint)
WHERE size(bare.roles) = 0
DELETE bare
WITH DISTINCT g, spend_grant
UNWIND (CASE WHEN size($ids) = 0 THEN [null] ELSE $ids END) AS cid
OPTIONAL MATCH (c:Constraint {id: cid})
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END |
  MERGE (g)-[h:HAS_CONSTRAINT]->(x)
  SET h.roles = [k IN ['core', 'eligible', 'selected', 'inherited', 'resolved', 'coupling', 'owed'] WHERE k = $role OR k IN coalesce(h.roles, [])])
WITH g, spend_grant, count(c) AS attached
// include: store_logs
// include: store_entries
// include: goal_family
// include: spend_family
// include: goal_view
RETURN g.status AS status, attached, spend_touched AS touched, attempts_touched, [g.id] AS roles_touched, view
