// mode: read
// Reuse (step 7): how goals of earlier runs on this goal's pattern and the patterns
// SIMILAR_TO it (same constraint signature) ended: verified atomic leaves of runs
// answered by the source this run asks ($identity: the same script content, or the
// same model; such a run's classification was asked of it, or taken from its own
// records in turn), and goals that were decomposed instead, whoever classified them
// (children other than the build subgoal a goal waits on while its tool is built).
MATCH (p:GoalPattern {id: $pattern_id})
OPTIONAL MATCH (p)-[:SIMILAR_TO]->(q:GoalPattern)
WITH p, collect(q) AS near
UNWIND [p] + near AS gp
WITH DISTINCT gp
MATCH (g:Goal)-[:INSTANCE_OF]->(gp)
WHERE g.run_id <> $run_id AND g.status = 'resolved' AND coalesce(g.stale, false) = false
OPTIONAL MATCH (child:Goal)-[:CHILD_OF]->(g)
WHERE coalesce(child.purpose, '') <> 'build'
WITH g, count(child) AS children
OPTIONAL MATCH (e:LedgerEntry {run_id: g.run_id})
WHERE e.reuse_key STARTS WITH $identity
WITH g, children, count(e) AS asked
WITH g, children, g.leaf_kind = 'atomic' AND children = 0 AND asked > 0 AS atomic
RETURN sum(CASE WHEN atomic THEN 1 ELSE 0 END) AS atomic,
       sum(CASE WHEN children > 0 THEN 1 ELSE 0 END) AS decomposed,
       min(CASE WHEN atomic THEN g.id END) AS example
