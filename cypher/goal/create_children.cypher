// mode: write
// Creates the children of a decomposition ($children: each one's properties, with the
// budget it is granted, and its constraint roles) under the goal $goal_id, in one
// statement that stands for one commit per child: seq advances by their number, and
// each child has the seq it would have had.
// A fresh decomposition is the whole step in this one commit: the dependencies among
// the children ($edges), an allocation event per granted child ($grants) with the
// total drawn from the parent ($grant: its cost and time, and what the parent must
// hold for them and the spend this commit pays), and the parent's move $from -> $to
// with $changes. Without them ([] and null) only the children are created.
// The commit also carries what the step made since the run's last commit: the spend
// that paid for the decomposition ($spend: see the store_spend fragment), its log lines
// ($logs) and its ledger entries ($entries).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index)
  AND ($spend IS NULL OR ($spend.attempt_id IS NULL AND $spend.output_artifact_id IS NULL))
  AND ($from IS NULL OR g.status = $from)
  AND ($grant IS NULL OR
       (g.cost_allocated + g.cost_refunded - g.cost_spent - g.cost_granted >= $grant.need_cost AND
        g.time_allocated + g.time_refunded - g.time_spent - g.time_granted >= $grant.need_time))
SET run.seq = $seq + size($children), run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    g.status = coalesce($to, g.status), g += $changes
// include: goal_labels
// include: ledger_tip
// include: store_spend
WITH *
SET g.cost_granted = g.cost_granted + coalesce($grant.cost, 0),
    g.time_granted = g.time_granted + coalesce($grant.time, 0)
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
  WITH made, c, collect(r.role) AS held
  CREATE (made)-[:HAS_CONSTRAINT {roles: [k IN ['core', 'eligible', 'selected', 'inherited', 'resolved', 'coupling', 'owed'] WHERE k IN held]}]->(c)
}
WITH *
CALL {
  WITH g
  UNWIND $grants AS row
  MATCH (c:Goal {id: row.child_id})
  CREATE (e:BudgetEvent {id: row.event_id, kind: 'allocate', goal_id: c.id, source_id: g.id,
                         cost: row.cost, time: row.time, seq: $seq, weight: row.weight,
                         description: 'allocation from parent',
                         caption: 'grant $' + toString(toInteger(floor(row.cost / 1000000.0))) + '.' +
                                 right('00000' + toString(row.cost - toInteger(floor(row.cost / 1000000.0)) * 1000000), 6)})
  CREATE (e)-[:CHARGED_TO]->(c)
  CREATE (e)-[:DRAWN_FROM]->(g)
}
WITH *
CALL {
  UNWIND $edges AS edge
  MATCH (a:Goal {id: edge.goal_id}), (b:Goal {id: edge.depends_on_id})
  CREATE (a)-[:DEPENDS_ON]->(b)
}
// include: store_logs
// include: store_entries
RETURN size($children) AS created
