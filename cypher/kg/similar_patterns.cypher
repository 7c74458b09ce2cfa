// mode: read
// Boot query (step 4): the patterns linked as SIMILAR_TO a goal's pattern, best first,
// with how their goals fared.
MATCH (:GoalPattern {id: $pattern_id})-[s:SIMILAR_TO]->(q:GoalPattern)
OPTIONAL MATCH (g:Goal)-[:INSTANCE_OF]->(q)
WITH q, s, count(g) AS goals,
     sum(CASE WHEN g.status = 'resolved' THEN 1 ELSE 0 END) AS resolved,
     max(g.sigma_v) AS best_sigma_v
RETURN q.id AS id, q.summary AS summary, s.score AS score, goals, resolved, best_sigma_v
ORDER BY score DESC, id
LIMIT $k
