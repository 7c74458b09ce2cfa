// mode: write
// Benchmark: parent and dependency edges for goals created by bench/create_goals.
UNWIND $rows AS row
MATCH (g:Goal {id: row.id})
OPTIONAL MATCH (p:Goal {id: row.parent_id})
FOREACH (x IN CASE WHEN p IS NULL THEN [] ELSE [p] END | CREATE (g)-[:CHILD_OF]->(x))
WITH g, row
UNWIND (CASE WHEN size(row.depends_on) = 0 THEN [null] ELSE row.depends_on END) AS dep
OPTIONAL MATCH (d:Goal {id: dep})
FOREACH (x IN CASE WHEN d IS NULL THEN [] ELSE [d] END | CREATE (g)-[:DEPENDS_ON]->(x))
RETURN count(DISTINCT g) AS merged
