// mode: read
// Boot query (step 9): the failure modes attempts on a goal's pattern (and the patterns
// SIMILAR_TO it) FAILED_BECAUSE of, most frequent first.
MATCH (p:GoalPattern {id: $pattern_id})
OPTIONAL MATCH (p)-[:SIMILAR_TO]->(q:GoalPattern)
WITH p, collect(q) AS near
UNWIND [p] + near AS gp
WITH DISTINCT gp
MATCH (a:Attempt)-[:TRIED_FOR]->(gp)
MATCH (a)-[:FAILED_BECAUSE]->(f:FailureMode)
WITH f, count(DISTINCT a) AS occurrences
RETURN f.id AS id, f.slug AS slug, f.description AS description, occurrences
ORDER BY occurrences DESC, id
LIMIT $k
