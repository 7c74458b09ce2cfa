// mode: read
// Reuse (step 2): goals of earlier runs with this very summary (normalized) and
// description that were verified and resolved, and whose identification was asked of
// the source this run asks ($identity: the same script content, or the same model),
// each with its core, inherited and eligible constraints and the capabilities
// identification named; earliest run first. The caller keeps only a goal whose core and
// inherited constraints are this goal's: the same question, put to the same source.
MATCH (p:GoalPattern {normalized: $normalized})<-[:INSTANCE_OF]-(g:Goal)
WHERE g.status = 'resolved' AND g.run_id <> $run_id AND coalesce(g.stale, false) = false
  AND g.description = $description
MATCH (e:LedgerEntry {run_id: g.run_id, goal_id: g.id})
WHERE e.operation = 'identify_constraints' AND e.kind = 'proposal'
  AND e.reuse_key STARTS WITH $identity
WITH DISTINCT g
OPTIONAL MATCH (g)-[h:HAS_CONSTRAINT]->(c:Constraint)
WITH g, c.id AS id, h.roles AS roles
ORDER BY id
WITH g, collect(CASE WHEN 'core' IN roles THEN id END) AS core,
     collect(CASE WHEN 'inherited' IN roles THEN id END) AS inherited,
     collect(CASE WHEN 'eligible' IN roles THEN id END) AS eligible
RETURN g.id AS goal_id, g.run_id AS run_id, core, inherited, eligible,
       g.required_capabilities AS required_capabilities
ORDER BY run_id, goal_id
LIMIT $k
