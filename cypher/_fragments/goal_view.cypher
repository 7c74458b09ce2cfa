// What a step reads of a goal bound as `g`, as one map `view` (every other variable in
// scope passes through): its properties, what next_action needs (status, which step
// outputs exist, whether it waits on an unresolved sibling dependency, on unresolved
// children or on a build or a HIRE answer; a build subgoal is waited on through
// `awaiting`, not as a child) and its budget with its parent's (remaining = allocated +
// refunded - spent - granted). A write that changes the goal ends with it, so its answer
// is also the goal's next read (`// refreshes: goal/get`).
// (Aggregated OPTIONAL MATCHes, not pattern comprehensions: FalkorDB evaluates a
// comprehension with a literal relationship-property map against the first edge only.)
CALL {
  WITH g
  OPTIONAL MATCH (g)-[h:HAS_CONSTRAINT]->(:Constraint)
  WITH g, count(CASE WHEN 'eligible' IN h.roles THEN 1 END) > 0 AS has_eligible,
       count(CASE WHEN 'selected' IN h.roles THEN 1 END) > 0 AS has_selected
  OPTIONAL MATCH (g)-[:DEPENDS_ON]->(d:Goal)
  WHERE d.status <> 'resolved'
  WITH g, has_eligible, has_selected, count(d) AS open_dependencies
  OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(g)
  WHERE c.status <> 'resolved' AND coalesce(c.stale, false) = false
    AND coalesce(c.purpose, 'solve') <> 'build'
  WITH g, has_eligible, has_selected, open_dependencies, count(c) AS open_children
  OPTIONAL MATCH (g)-[:CHILD_OF]->(p:Goal)
  RETURN {goal: properties(g),
          has_eligible: has_eligible,
          has_selected: has_selected,
          has_plan: g.plan_artifact_id IS NOT NULL,
          has_output: g.output_artifact_id IS NOT NULL,
          blocked: open_dependencies + open_children > 0 OR g.awaiting IS NOT NULL,
          cost_left: g.cost_allocated + g.cost_refunded - g.cost_spent - g.cost_granted,
          time_left: g.time_allocated + g.time_refunded - g.time_spent - g.time_granted,
          parent_id: p.id,
          parent_cost_left: p.cost_allocated + p.cost_refunded - p.cost_spent - p.cost_granted,
          parent_time_left: p.time_allocated + p.time_refunded - p.time_spent - p.time_granted
         } AS view
}
