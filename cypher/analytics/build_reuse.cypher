// mode: read
// Tools the system built or a human gave, and how often later goals used them: the
// compounding that BUILD and HIRE are for.
// (toInteger: the embedded store's sum() of integers is a float.)
MATCH (r:Resolver)
WHERE r.built_by IN ['system', 'human']
OPTIONAL MATCH (a:Attempt)-[:USED]->(r)
RETURN r.id AS resolver, r.built_by AS built_by, r.built_for_node_id AS built_for,
       count(a) AS attempts, count(DISTINCT a.goal_id) AS goals,
       toInteger(sum(CASE WHEN a.verdict = 'SAT' THEN 1 ELSE 0 END)) AS satisfied
ORDER BY goals DESC, resolver
