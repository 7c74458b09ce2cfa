// mode: write
// Creates the children of a decomposition ($children: each one's properties and
// constraint roles) under $parent_id, in one statement that stands for one commit per
// child: seq advances by their number, and each child has the seq it would have had.
MATCH (run:Run {id: $run_id}), (parent:Goal {id: $parent_id})
WHERE run.seq = $seq
SET run.seq = $seq + size($children), run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
WITH run, parent
CALL {
  WITH parent
  UNWIND $children AS child
  CREATE (g:Goal)
  SET g = child.props
  CREATE (g)-[:CHILD_OF]->(parent)
  WITH g, child
  UNWIND child.roles AS r
  MATCH (c:Constraint {id: r.id})
  MERGE (g)-[h:HAS_CONSTRAINT {id: r.role}]->(c)
  SET h.role = r.role
}
RETURN size($children) AS created
