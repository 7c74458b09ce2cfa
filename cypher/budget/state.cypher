// mode: read
// cache: read
// Budget caches of a goal and of its parent (remaining = allocated + refunded - spent - granted).
MATCH (g:Goal {id: $goal_id})
OPTIONAL MATCH (g)-[:CHILD_OF]->(p:Goal)
RETURN g.cost_allocated + g.cost_refunded - g.cost_spent - g.cost_granted AS cost_left,
       g.time_allocated + g.time_refunded - g.time_spent - g.time_granted AS time_left,
       p.id AS parent_id,
       p.cost_allocated + p.cost_refunded - p.cost_spent - p.cost_granted AS parent_cost_left,
       p.time_allocated + p.time_refunded - p.time_spent - p.time_granted AS parent_time_left
