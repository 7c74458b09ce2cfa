// mode: read
// A run's goals with their committed state and constraint roles (for the summary hash).
MATCH (g:Goal {run_id: $run_id})
OPTIONAL MATCH (g)-[h:HAS_CONSTRAINT]->(c:Constraint)
UNWIND coalesce(h.roles, [null]) AS role
WITH g, c, role
ORDER BY role, c.id
WITH g, collect([role, c.id]) AS roles
OPTIONAL MATCH (g)-[:DEPENDS_ON]->(d:Goal)
WITH g, roles, d
ORDER BY d.id
RETURN g.id AS id, g.parent_id AS parent_id, g.status AS status, g.summary AS summary,
       g.sigma_v AS sigma_v, g.sigma_path AS sigma_path, g.leaf_kind AS leaf_kind,
       g.attempt_count AS attempts, g.output_artifact_id AS output,
       g.cost_spent AS cost_spent, g.time_spent AS time_spent,
       g.cost_allocated AS cost_allocated, coalesce(g.stale, false) AS stale,
       roles, collect(d.id) AS depends_on
ORDER BY id
