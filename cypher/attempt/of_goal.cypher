// mode: read
// cache: read
// A goal's attempts in order (the TRY history fed back to resolvers).
MATCH (a:Attempt)-[:FOR]->(g:Goal {id: $goal_id})
RETURN properties(a) AS attempt
ORDER BY a.attempt_index
