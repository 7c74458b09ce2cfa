// mode: read
// The goals above a goal, nearest first, with what each has left to give (remaining =
// allocated + refunded - spent - granted): where a shortfall its parent cannot cover is
// drawn from, level by level, before anyone is asked for more.
MATCH path = (g:Goal {id: $goal_id})-[:CHILD_OF*1..]->(a:Goal)
RETURN a.id AS id, length(path) AS depth,
       a.cost_allocated + a.cost_refunded - a.cost_spent - a.cost_granted AS cost_left,
       a.time_allocated + a.time_refunded - a.time_spent - a.time_granted AS time_left
ORDER BY depth
