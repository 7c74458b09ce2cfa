// mode: read
// Step 12's coupling detection over the live leaves under a root (build subgoals are
// not part of the solution). Two leaves are coupled when
//   dependency: one reaches the other through a dependency path, the transitive closure
//               over DEPENDS_ON between the leaves or any of their ancestors;
//   artifact:   one consumes an artifact the other produced;
//   constraint: both selected the same logic constraint (a shared resource or interface;
//               a shared semantic rubric is judged per leaf and couples nothing).
// Each traversal expands from one leaf at a time, so the cost grows with what is
// reachable, not with the square of the number of leaves.
MATCH (g:Goal {root_id: $root_id})
WHERE coalesce(g.stale, false) = false AND coalesce(g.purpose, 'solve') <> 'build'
OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(g)
WHERE coalesce(c.stale, false) = false AND coalesce(c.purpose, 'solve') <> 'build'
WITH g, count(c) AS children
WHERE children = 0
WITH collect(g.id) AS leaves
UNWIND leaves AS leaf
MATCH (a:Goal {id: leaf})-[:CHILD_OF*0..]->(:Goal)-[:DEPENDS_ON*1..]->(:Goal)<-[:CHILD_OF*0..]-(b:Goal)
WHERE b.id IN leaves AND b.id <> a.id
RETURN DISTINCT a.id AS a, b.id AS b, 'dependency' AS kind, '' AS via
UNION
MATCH (g:Goal {root_id: $root_id})
WHERE coalesce(g.stale, false) = false AND coalesce(g.purpose, 'solve') <> 'build'
OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(g)
WHERE coalesce(c.stale, false) = false AND coalesce(c.purpose, 'solve') <> 'build'
WITH g, count(c) AS children
WHERE children = 0
WITH collect(g) AS leaves
UNWIND leaves AS a
MATCH (a)-[ha:HAS_CONSTRAINT]->(k:Constraint {type: 'logic'})<-[hb:HAS_CONSTRAINT]-(b:Goal)
WHERE ha.role = 'selected' AND hb.role = 'selected' AND b IN leaves AND a.id < b.id
RETURN DISTINCT a.id AS a, b.id AS b, 'constraint' AS kind, k.title AS via
UNION
MATCH (g:Goal {root_id: $root_id})
WHERE coalesce(g.stale, false) = false AND coalesce(g.purpose, 'solve') <> 'build'
OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(g)
WHERE coalesce(c.stale, false) = false AND coalesce(c.purpose, 'solve') <> 'build'
WITH g, count(c) AS children
WHERE children = 0
WITH collect(g) AS leaves
UNWIND leaves AS b
UNWIND coalesce(b.input_artifact_ids, []) AS input
MATCH (x:Artifact {id: input})
MATCH (a:Goal {id: x.goal_id})
WHERE a IN leaves AND a.output_artifact_id = input AND a.id <> b.id
RETURN DISTINCT a.id AS a, b.id AS b, 'artifact' AS kind, input AS via
