// mode: write
// changes: goal/get(touched), dag/children, dag/unresolved_dependencies, goal/children_keys, constraint/of_goal(touched), constraint/ancestors_resolved
// refreshes: goal/get
// Gives a set of constraints one role on a goal (replacing that role's previous set),
// moving the goal's status and writing the step's other fields in the same commit.
// With $pattern_id (step 2) the goal becomes an INSTANCE_OF its goal pattern, which
// REQUIRES the capabilities the step identified.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = $from
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = $to, g += $changes
FOREACH (removal IN $removals | SET g += removal)
WITH g
OPTIONAL MATCH (p:GoalPattern {id: $pattern_id})
FOREACH (x IN CASE WHEN p IS NULL THEN [] ELSE [p] END | MERGE (g)-[:INSTANCE_OF]->(x))
WITH DISTINCT g, p
UNWIND (CASE WHEN p IS NULL OR size($capabilities) = 0 THEN [null] ELSE $capabilities END) AS tag
OPTIONAL MATCH (cap:Capability {id: 'capability:' + tag})
FOREACH (x IN CASE WHEN cap IS NULL OR p IS NULL THEN [] ELSE [cap] END |
  MERGE (p)-[:REQUIRES]->(x))
WITH DISTINCT g
OPTIONAL MATCH (g)-[old:HAS_CONSTRAINT {id: $role}]->(:Constraint)
DELETE old
WITH DISTINCT g
UNWIND (CASE WHEN size($ids) = 0 THEN [null] ELSE $ids END) AS cid
OPTIONAL MATCH (c:Constraint {id: cid})
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END |
  MERGE (g)-[h:HAS_CONSTRAINT {id: $role}]->(x)
  SET h.role = $role)
WITH g, count(c) AS attached
// include: goal_family
// include: goal_view
RETURN g.status AS status, attached, touched, view
