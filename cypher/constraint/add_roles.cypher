// mode: write
// Adds constraints to roles of a goal (a coupling constraint placed at the lowest common
// ancestor of the leaves it couples, say), in one commit; adding one twice is a no-op.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
WITH g
UNWIND $rows AS row
MATCH (c:Constraint {id: row.id})
MERGE (g)-[h:HAS_CONSTRAINT {id: row.role}]->(c)
SET h.role = row.role
RETURN g.id AS id, count(c) AS added
