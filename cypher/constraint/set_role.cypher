// mode: write
// Gives a set of constraints one role on a goal (replacing that role's previous set),
// moving the goal's status and writing the step's other fields in the same commit.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = $from
SET run.seq = $seq + 1, run.proposals = $proposals, g.status = $to, g += $changes
WITH g
OPTIONAL MATCH (g)-[old:HAS_CONSTRAINT {id: $role}]->(:Constraint)
DELETE old
WITH DISTINCT g
UNWIND (CASE WHEN size($ids) = 0 THEN [null] ELSE $ids END) AS cid
OPTIONAL MATCH (c:Constraint {id: cid})
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END |
  MERGE (g)-[h:HAS_CONSTRAINT {id: $role}]->(x)
  SET h.role = $role)
RETURN g.status AS status, count(c) AS attached
