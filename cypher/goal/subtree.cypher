// mode: read
// A goal and all its live descendants, with their parent and sigma_v.
MATCH (d:Goal)-[:CHILD_OF*0..]->(a:Goal {id: $goal_id})
WHERE coalesce(d.stale, false) = false OR d.id = $goal_id
RETURN d.id AS id, d.parent_id AS parent_id, d.sigma_v AS sigma_v, d.sigma_path AS sigma_path,
       d.depth AS depth
ORDER BY d.depth, d.seq, d.id
