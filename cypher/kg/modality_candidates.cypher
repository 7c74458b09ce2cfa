// mode: read
// Boot query (step 4): resolvers by their successes on inputs of the goal's modality,
// over the goal's pattern and the patterns SIMILAR_TO it.
MATCH (p:GoalPattern {id: $pattern_id})
OPTIONAL MATCH (p)-[:SIMILAR_TO]->(q:GoalPattern)
WITH p, collect(q) AS near
UNWIND [p] + near AS gp
WITH DISTINCT gp
MATCH (r:Resolver)-[e:SUCCEEDED_ON|FAILED_ON]->(gp)
RETURN r.id AS resolver_id,
       sum(CASE WHEN type(e) = 'SUCCEEDED_ON' AND e.modality = $modality THEN 1 ELSE 0 END)
         AS modality_successes,
       count(e) AS outcomes
ORDER BY modality_successes DESC, outcomes DESC, resolver_id
LIMIT $k
