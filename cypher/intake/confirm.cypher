// mode: write
// Step 1 ends: the root takes the goal the person confirmed (description, summary) and
// its confirmed core constraints in place of the ones typed, the intake closes, and
// its last question (answered in the terminal, by a script or with `kernel hire
// answer`) is marked delivered; one commit.
// The log lines the step wrote since its last commit ($logs) are stored with it.
// The ledger entries made since the last commit ($entries) are chained and stored with it.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND (size($entries) = 0 OR coalesce(run.ledger_size, 0) = $entries[0].props.index) AND g.status = 'pending' AND g.intake = 'open'
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    g += $changes
FOREACH (tip IN CASE WHEN size($entries) = 0 THEN [] ELSE [last($entries).props] END |
  SET run.ledger_head = tip.hash, run.ledger_size = tip.index + 1)
FOREACH (removal IN $removals | SET g += removal)
WITH g
OPTIONAL MATCH (g)-[old:HAS_CONSTRAINT {role: 'core'}]->(:Constraint)
DELETE old
WITH DISTINCT g
OPTIONAL MATCH (c:Constraint)
WHERE c.id IN $core_ids
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END |
  MERGE (g)-[h:HAS_CONSTRAINT {id: 'core'}]->(x)
  SET h.role = 'core')
WITH DISTINCT g
OPTIONAL MATCH (q:CapabilityRequest {capability_tag: $intake_tag})-[:RAISED_FOR]->(g)
WHERE q.status IN ['requested', 'answered']
FOREACH (x IN CASE WHEN q IS NULL THEN [] ELSE [q] END |
  SET x.status = 'delivered', x.caption = 'delivered: ' + x.capability_tag)
WITH DISTINCT g
CALL {
  UNWIND $logs AS entry
  MERGE (l:LogEntry {id: entry.id})
  SET l += entry.props
  WITH l, entry
  OPTIONAL MATCH (about:Goal {id: entry.goal_id})
  FOREACH (x IN CASE WHEN about IS NULL THEN [] ELSE [about] END | MERGE (l)-[:ABOUT]->(x))
}
CALL {
  UNWIND $entries AS entry
  MATCH (r:Run {id: $run_id})
  CREATE (e:LedgerEntry)
  SET e = entry.props
  CREATE (e)-[:RECORDED_IN]->(r)
  WITH collect({e: e, prev: entry.prev_id}) AS made
  OPTIONAL MATCH (head:LedgerEntry {id: made[0].prev})
  UNWIND made AS m
  WITH m.e AS later,
       [x IN made WHERE x.e.id = m.prev | x.e] + [h IN [head] WHERE h IS NOT NULL AND h.id = m.prev] AS earlier
  FOREACH (x IN earlier | CREATE (later)-[:FOLLOWS]->(x))
}
RETURN g.id AS id
