// mode: read
// Step 12's coupling detection over the live leaves under a root (build subgoals are
// not part of the solution). Two leaves are coupled when
//   dependency: one reaches the other through a dependency path, the transitive closure
//               over DEPENDS_ON between the leaves or any of their ancestors;
//   artifact:   one consumes an artifact the other produced;
//   constraint: both selected the same logic constraint (a shared resource or interface;
//               a shared semantic rubric is judged per leaf and couples nothing).
// A leaf is recognised by its own properties (a resolved leaf carries its leaf_kind, and
// the check runs once every leaf is resolved), never by searching a list; traversals
// expand from one leaf at a time and filter after a WITH (so the planner keeps starting
// from the indexed leaf), and shared constraints are grouped from the constraint side:
// the cost grows with what is reachable, not with leaves times pairs.
MATCH (g:Goal {root_id: $root_id})
WHERE coalesce(g.stale, false) = false AND coalesce(g.purpose, 'solve') <> 'build'
OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(g)
WHERE coalesce(c.stale, false) = false AND coalesce(c.purpose, 'solve') <> 'build'
WITH g, count(c) AS children
WHERE children = 0
WITH collect(g.id) AS leaves
UNWIND leaves AS leaf
MATCH (a:Goal {id: leaf})-[:CHILD_OF*0..]->(:Goal)-[:DEPENDS_ON*1..]->(:Goal)<-[:CHILD_OF*0..]-(b:Goal)
WITH DISTINCT a, b
WHERE b.id <> a.id AND b.leaf_kind IS NOT NULL AND b.root_id = $root_id
  AND coalesce(b.stale, false) = false AND coalesce(b.purpose, 'solve') <> 'build'
RETURN DISTINCT a.id AS a, b.id AS b, 'dependency' AS kind, '' AS via
UNION
MATCH (k:Constraint {type: 'logic'})<-[h:HAS_CONSTRAINT]-(a:Goal {root_id: $root_id})
WHERE 'selected' IN h.roles AND a.leaf_kind IS NOT NULL AND coalesce(a.stale, false) = false
  AND coalesce(a.purpose, 'solve') <> 'build'
WITH k, collect(DISTINCT a.id) AS sharing
WHERE size(sharing) > 1
UNWIND sharing AS x
UNWIND sharing AS y
WITH k, x, y
WHERE x < y
RETURN DISTINCT x AS a, y AS b, 'constraint' AS kind, k.title AS via
UNION
MATCH (b:Goal {root_id: $root_id})
WHERE b.leaf_kind IS NOT NULL AND coalesce(b.stale, false) = false
  AND coalesce(b.purpose, 'solve') <> 'build'
UNWIND coalesce(b.input_artifact_ids, []) AS input
MATCH (x:Artifact {id: input})
MATCH (a:Goal {id: x.goal_id})
WITH a, b, input
WHERE a.output_artifact_id = input AND a.id <> b.id AND a.leaf_kind IS NOT NULL
  AND coalesce(a.stale, false) = false AND coalesce(a.purpose, 'solve') <> 'build'
RETURN DISTINCT a.id AS a, b.id AS b, 'artifact' AS kind, input AS via
