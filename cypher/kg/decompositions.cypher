// mode: read
// Boot query (step 8): how goals of the same or SIMILAR_TO patterns were decomposed:
// their live children in order, each with the siblings it waited for.
MATCH (p:GoalPattern {id: $pattern_id})
OPTIONAL MATCH (p)-[:SIMILAR_TO]->(q:GoalPattern)
WITH p, collect(q) AS near
UNWIND [p] + near AS gp
WITH DISTINCT gp
MATCH (g:Goal)-[:INSTANCE_OF]->(gp)
WHERE g.id <> $goal_id AND coalesce(g.decompositions, 0) > 0
  AND coalesce(g.stale, false) = false
WITH DISTINCT g
ORDER BY CASE WHEN g.status = 'resolved' THEN 0 ELSE 1 END, g.id
LIMIT $k
MATCH (c:Goal)-[:CHILD_OF]->(g)
WHERE coalesce(c.stale, false) = false AND coalesce(c.purpose, 'solve') <> 'build'
OPTIONAL MATCH (c)-[:DEPENDS_ON]->(d:Goal)
WITH g, c, collect(d.summary) AS after
ORDER BY g.id, c.seq
WITH g, collect({summary: c.summary, status: c.status, after: after}) AS children
RETURN g.id AS goal_id, g.summary AS summary, g.status AS status, children
ORDER BY CASE WHEN status = 'resolved' THEN 0 ELSE 1 END, goal_id
