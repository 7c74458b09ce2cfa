// mode: write
// Creates the children of a decomposition ($children: each one's properties and
// constraint roles) under the goal $goal_id, in one statement that stands for one commit
// per child: seq advances by their number, and each child has the seq it would have had.
// The commit also carries what the step made since the run's last commit: the spend
// that paid for the decomposition ($spend: see the store_spend fragment), its log lines
// ($logs) and its ledger entries ($entries).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
  AND ($spend IS NULL OR ($spend.attempt_id IS NULL AND $spend.output_artifact_id IS NULL))
SET run.seq = $seq + size($children), run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
// include: ledger_tip
// include: store_spend
WITH *
CALL {
  WITH g
  UNWIND $children AS child
  CREATE (made:Goal)
  SET made = child.props
  CREATE (made)-[:CHILD_OF]->(g)
  WITH made, child
  UNWIND child.roles AS r
  MATCH (c:Constraint {id: r.id})
  MERGE (made)-[h:HAS_CONSTRAINT {id: r.role}]->(c)
  SET h.role = r.role
}
// include: store_logs
// include: store_entries
RETURN size($children) AS created
