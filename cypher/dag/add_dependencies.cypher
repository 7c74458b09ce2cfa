// mode: write
// Several sibling dependencies in one commit (a decomposition's DAG).
MATCH (run:Run {id: $run_id})
WHERE run.seq = $seq
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
WITH run
UNWIND $rows AS row
MATCH (g:Goal {id: row.goal_id})-[:CHILD_OF]->(p:Goal)<-[:CHILD_OF]-(d:Goal {id: row.depends_on_id})
MERGE (g)-[:DEPENDS_ON]->(d)
RETURN run.seq AS seq, count(g) AS added
