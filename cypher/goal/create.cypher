// mode: write
// Creates a goal (root of the run, or child of $parent_id) with its constraint roles: one
// HAS_CONSTRAINT edge per constraint, its roles a list in the kernel's order
// (kernel.core.constraints.ROLES).
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
WITH g, c, collect(r.role) AS held
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END |
  CREATE (g)-[:HAS_CONSTRAINT {roles: [k IN ['core', 'eligible', 'selected', 'inherited', 'resolved', 'coupling', 'owed'] WHERE k IN held]}]->(x))
RETURN g.id AS id, count(c) AS attached
