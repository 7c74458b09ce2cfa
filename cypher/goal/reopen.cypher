// mode: write
// Backtracking: reopens a goal and invalidates its subtree. Descendants lose their
// outputs, verification, resolved constraints, confidence and dependencies and go
// back to pending (marked stale); their attempts and logs stay.
MATCH (run:Run {id: $run_id}), (u:Goal {id: $goal_id})
WHERE run.seq = $seq AND u.status IN $from_states
SET run.seq = $seq + 1, run.proposals = $proposals, u.status = $to, u += $changes
WITH u
OPTIONAL MATCH (w:Goal)-[:CHILD_OF*1..]->(u)
WITH u, collect(DISTINCT w) AS subtree
FOREACH (w IN subtree |
  SET w.status = 'pending', w.stale = true, w.invalidated_at_seq = $seq,
      w.output_artifact_id = null, w.verification = null, w.sigma_v = null,
      w.sigma_path = null)
WITH u, subtree
UNWIND (CASE WHEN size(subtree) = 0 THEN [null] ELSE subtree END) AS w
OPTIONAL MATCH (w)-[resolved:HAS_CONSTRAINT {id: 'resolved'}]->(:Constraint)
DELETE resolved
WITH u, subtree, w
OPTIONAL MATCH (w)-[dep:DEPENDS_ON]->(:Goal)
DELETE dep
RETURN u.status AS status, size(subtree) AS invalidated
