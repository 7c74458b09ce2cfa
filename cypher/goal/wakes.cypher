// mode: read
// Whom a goal about to end wakes: its dependents that wait on nothing else, and whether
// its parent then waits on no other live part (build subgoals aside: a parent waits on
// those through `awaiting`). Goals still blocked are not woken only to wait again.
MATCH (g:Goal {id: $goal_id})
OPTIONAL MATCH (d:Goal)-[:DEPENDS_ON]->(g)
WHERE coalesce(d.stale, false) = false
OPTIONAL MATCH (d)-[:DEPENDS_ON]->(other:Goal)
WHERE other.id <> g.id AND other.status <> 'resolved'
WITH g, d, count(other) AS others
WITH g, collect(CASE WHEN d IS NOT NULL AND others = 0 THEN [d.seq, d.id] END) AS ready
OPTIONAL MATCH (g)-[:CHILD_OF]->(p:Goal)
OPTIONAL MATCH (s:Goal)-[:CHILD_OF]->(p)
WHERE s.id <> g.id AND coalesce(s.stale, false) = false
  AND coalesce(s.purpose, 'solve') <> 'build' AND NOT s.status IN ['resolved', 'infeasible']
RETURN ready, p.id AS parent_id, count(s) AS parent_waits_on
