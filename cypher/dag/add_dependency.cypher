// mode: write
// $goal_id must wait for its sibling $depends_on_id.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})-[:CHILD_OF]->(p:Goal),
      (d:Goal {id: $depends_on_id})-[:CHILD_OF]->(p)
WHERE run.seq = $seq AND g.id <> d.id
SET run.seq = $seq + 1
MERGE (g)-[:DEPENDS_ON]->(d)
RETURN g.id AS id
