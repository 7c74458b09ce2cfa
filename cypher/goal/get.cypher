// mode: read
// cache: read
// One goal with all its properties.
MATCH (g:Goal {id: $goal_id})
RETURN properties(g) AS goal
