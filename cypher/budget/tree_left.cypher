// mode: read
// What every live goal of a tree has left (stale ones gave theirs back when they were
// invalidated): for the question a budget HIRE asks, which says what the tree holds.
MATCH (w:Goal)-[:CHILD_OF*0..]->(r:Goal {id: $root_id})
WHERE coalesce(w.stale, false) = false
RETURN w.id AS id, w.status AS status,
       w.cost_allocated + w.cost_refunded - w.cost_spent - w.cost_granted AS cost_left,
       w.time_allocated + w.time_refunded - w.time_spent - w.time_granted AS time_left
ORDER BY id
