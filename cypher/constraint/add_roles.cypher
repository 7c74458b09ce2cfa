// mode: write
// Adds constraints to roles of a goal (a coupling constraint placed at the lowest common
// ancestor of the leaves it couples, say), in one commit; adding one twice is a no-op.
// A constraint already held in another role keeps its one edge, which lists both roles.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
WITH g
UNWIND $rows AS row
MATCH (c:Constraint {id: row.id})
WITH g, c, collect(row.role) AS held
MERGE (g)-[h:HAS_CONSTRAINT]->(c)
SET h.roles = [k IN ['core', 'eligible', 'selected', 'inherited', 'resolved', 'coupling', 'owed'] WHERE k IN held OR k IN coalesce(h.roles, [])]
RETURN g.id AS id, count(c) AS added
