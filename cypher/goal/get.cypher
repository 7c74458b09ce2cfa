// mode: read
// cache: read
// One goal with all its properties, what next_action needs (status, which step outputs
// exist, whether it waits on an unresolved sibling dependency, on unresolved children or
// on a build or a HIRE answer; a build subgoal is waited on through `awaiting`, not as a
// child) and its budget with its parent's (remaining = allocated + refunded - spent -
// granted): one read serves a step's goal, its next action and its budget pre-check.
// (Aggregated OPTIONAL MATCHes, not pattern comprehensions: FalkorDB evaluates a
// comprehension with a literal relationship-property map against the first edge only.)
MATCH (g:Goal {id: $goal_id})
OPTIONAL MATCH (g)-[h:HAS_CONSTRAINT]->(:Constraint)
WITH g, collect(DISTINCT h.role) AS roles
OPTIONAL MATCH (g)-[:DEPENDS_ON]->(d:Goal)
WHERE d.status <> 'resolved'
WITH g, roles, count(d) AS open_dependencies
OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(g)
WHERE c.status <> 'resolved' AND coalesce(c.stale, false) = false
  AND coalesce(c.purpose, 'solve') <> 'build'
WITH g, roles, open_dependencies, count(c) AS open_children
OPTIONAL MATCH (g)-[:CHILD_OF]->(p:Goal)
RETURN properties(g) AS goal,
       'eligible' IN roles AS has_eligible,
       'selected' IN roles AS has_selected,
       g.plan_artifact_id IS NOT NULL AS has_plan,
       g.output_artifact_id IS NOT NULL AS has_output,
       open_dependencies + open_children > 0 OR g.awaiting IS NOT NULL AS blocked,
       g.cost_allocated + g.cost_refunded - g.cost_spent - g.cost_granted AS cost_left,
       g.time_allocated + g.time_refunded - g.time_spent - g.time_granted AS time_left,
       p.id AS parent_id,
       p.cost_allocated + p.cost_refunded - p.cost_spent - p.cost_granted AS parent_cost_left,
       p.time_allocated + p.time_refunded - p.time_spent - p.time_granted AS parent_time_left
