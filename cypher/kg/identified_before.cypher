// mode: read
// Reuse (step 2): goals of earlier runs with this very summary (normalized) that were
// verified and resolved, each with its core, inherited and eligible constraints and the
// capabilities identification named; earliest run first. The caller keeps only a goal
// whose core and inherited constraints are this goal's: the same question, answered.
MATCH (p:GoalPattern {normalized: $normalized})<-[:INSTANCE_OF]-(g:Goal)
WHERE g.status = 'resolved' AND g.run_id <> $run_id AND coalesce(g.stale, false) = false
OPTIONAL MATCH (g)-[:HAS_CONSTRAINT {id: 'core'}]->(core:Constraint)
WITH g, collect(DISTINCT core.id) AS core
OPTIONAL MATCH (g)-[:HAS_CONSTRAINT {id: 'inherited'}]->(inh:Constraint)
WITH g, core, collect(DISTINCT inh.id) AS inherited
OPTIONAL MATCH (g)-[:HAS_CONSTRAINT {id: 'eligible'}]->(el:Constraint)
WITH g, core, inherited, collect(DISTINCT el.id) AS eligible
RETURN g.id AS goal_id, g.run_id AS run_id, core, inherited, eligible,
       g.required_capabilities AS required_capabilities
ORDER BY run_id, goal_id
LIMIT $k
