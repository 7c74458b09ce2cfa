// The goals whose view a spend ($spend, or null) on the goal bound as `g` changes, as
// `spend_touched`: those in `touched` (goal_family), the goal's children, which see
// its budget, and the goals above it, whose `subtree_cost_spent` it adds to; a grant from the parent (`spend_grant`, see store_spend) changes every
// sibling's view, so then it is null (every cached goal read is dropped). The goal's
// attempts change only when the commit opens one or pays for one: `attempts_touched` is
// the goal then, and empty otherwise (its attempt/of_goal answer survives).
CALL {
  WITH g
  OPTIONAL MATCH (below:Goal)-[:CHILD_OF]->(g)
  WHERE $spend IS NOT NULL
  WITH g, collect(below.id) AS below
  OPTIONAL MATCH (g)-[:CHILD_OF*1..]->(above:Goal)
  WHERE $spend IS NOT NULL
  WITH below, collect(above.id) AS above
  RETURN below + above AS spend_below
}
WITH *, CASE WHEN spend_grant THEN null ELSE touched + spend_below END AS spend_touched,
     CASE WHEN $attempt IS NULL AND $spend IS NULL THEN [] ELSE [g.id] END AS attempts_touched
