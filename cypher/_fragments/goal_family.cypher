// The goals whose view (the goal_view fragment) a change of the status or step fields of
// the goal bound as `g` can change, as the list `touched`: the goal, its parent (which
// counts its open children) and the goals that depend on it. A commit returns it so the
// read cache drops only those goals' reads (`// changes: goal/get(touched)`).
CALL {
  WITH g
  OPTIONAL MATCH (g)-[:CHILD_OF]->(up:Goal)
  WITH g, collect(up.id) AS ups
  OPTIONAL MATCH (after:Goal)-[:DEPENDS_ON]->(g)
  WITH g, ups, collect(after.id) AS afters
  RETURN [g.id] + ups + afters AS touched
}
