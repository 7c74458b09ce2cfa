// mode: read
// What the sigma_path of a goal and of its live descendants is computed from, in one
// read: the root-to-goal path with each node's sigma_v (confidence composes along it),
// and the goal with its live descendants, each with its parent, sigma_v, stored
// sigma_path and what orders them parents first (depth, seq, id).
MATCH (g:Goal {id: $goal_id})
OPTIONAL MATCH p = (g)-[:CHILD_OF*0..]->(root:Goal)
WHERE root.parent_id IS NULL
WITH g, collect([n IN reverse(nodes(p)) | {id: n.id, sigma_v: n.sigma_v, depth: n.depth}]) AS paths
CALL {
  WITH g
  MATCH (d:Goal)-[:CHILD_OF*0..]->(g)
  WHERE coalesce(d.stale, false) = false OR d.id = g.id
  RETURN collect({id: d.id, parent_id: d.parent_id, sigma_v: d.sigma_v,
                  sigma_path: d.sigma_path, depth: d.depth, seq: d.seq}) AS subtree
}
RETURN coalesce(head(paths), []) AS path, subtree
