// mode: read
// cache: read
// What next_action needs: status, which step outputs exist, and whether the goal
// waits on an unresolved sibling dependency, on unresolved children (a build subgoal is
// waited on through `awaiting`, not as a child) or on a build or a HIRE answer.
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
RETURN g.status AS status,
       'eligible' IN roles AS has_eligible,
       'selected' IN roles AS has_selected,
       g.plan_artifact_id IS NOT NULL AS has_plan,
       g.output_artifact_id IS NOT NULL AS has_output,
       open_dependencies + open_children > 0 OR g.awaiting IS NOT NULL AS blocked
