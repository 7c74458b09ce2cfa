// mode: read
// The root-to-goal path with each node's sigma_v (confidence composes along it).
MATCH p = (g:Goal {id: $goal_id})-[:CHILD_OF*0..]->(root:Goal)
WHERE root.parent_id IS NULL
RETURN [n IN reverse(nodes(p)) | {id: n.id, sigma_v: n.sigma_v, depth: n.depth}] AS path
