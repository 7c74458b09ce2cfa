// mode: write
// Benchmark (kernel bench kg): synthetic goals, each an INSTANCE_OF its pattern with
// its selected constraints (children get a CHILD_OF edge to their parent).
UNWIND $rows AS row
MATCH (p:GoalPattern {id: row.pattern})
CREATE (g:Goal {id: row.id, run_id: 'bench:kg', summary: row.summary, caption: row.summary,
                status: row.status, seq: row.seq, depth: row.depth,
                decompositions: row.decompositions, pattern_id: row.pattern})
CREATE (g)-[:INSTANCE_OF]->(p)
WITH g, row
OPTIONAL MATCH (parent:Goal {id: row.parent_id})
FOREACH (x IN CASE WHEN parent IS NULL THEN [] ELSE [parent] END | CREATE (g)-[:CHILD_OF]->(x))
WITH g, row
UNWIND row.constraints AS cid
MATCH (c:Constraint {id: cid})
CREATE (g)-[:HAS_CONSTRAINT {roles: ['selected']}]->(c)
RETURN count(DISTINCT g) AS merged
