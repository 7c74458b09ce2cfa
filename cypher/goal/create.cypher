// mode: write
// Creates a goal (root of the run, or child of $parent_id) with its constraint roles.
MATCH (run:Run {id: $run_id})
WHERE run.seq = $seq
OPTIONAL MATCH (parent:Goal {id: $parent_id})
WITH run, parent
WHERE ($parent_id IS NULL) = (parent IS NULL)
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
CREATE (g:Goal)
SET g = $props
FOREACH (p IN CASE WHEN parent IS NULL THEN [] ELSE [parent] END |
  CREATE (g)-[:CHILD_OF]->(p))
FOREACH (_ IN CASE WHEN parent IS NULL THEN [1] ELSE [] END |
  CREATE (run)-[:ROOT]->(g))
WITH g
UNWIND (CASE WHEN size($roles) = 0 THEN [null] ELSE $roles END) AS r
OPTIONAL MATCH (c:Constraint {id: r.id})
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END |
  MERGE (g)-[h:HAS_CONSTRAINT {id: r.role}]->(x)
  SET h.role = r.role)
RETURN g.id AS id, count(c) AS attached
