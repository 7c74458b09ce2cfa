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
// include: ledger_tip
FOREACH (removal IN $removals | SET g += removal)
WITH g
OPTIONAL MATCH (g)-[old:HAS_CONSTRAINT]->(k:Constraint)
WHERE 'core' IN old.roles AND NOT k.id IN $core_ids
FOREACH (e IN CASE WHEN old IS NULL THEN [] ELSE [old] END |
  SET e.roles = [x IN e.roles WHERE x <> 'core'])
WITH DISTINCT g
OPTIONAL MATCH (g)-[bare:HAS_CONSTRAINT]->(:Constraint)
WHERE size(bare.roles) = 0
DELETE bare
WITH DISTINCT g
OPTIONAL MATCH (c:Constraint)
WHERE c.id IN $core_ids
FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END |
  MERGE (g)-[h:HAS_CONSTRAINT]->(x)
  SET h.roles = [k IN ['core', 'eligible', 'selected', 'inherited', 'resolved', 'coupling', 'owed'] WHERE k = 'core' OR k IN coalesce(h.roles, [])])
WITH DISTINCT g
OPTIONAL MATCH (q:CapabilityRequest {capability_tag: $intake_tag})-[:RAISED_FOR]->(g)
WHERE q.status IN ['requested', 'answered']
FOREACH (x IN CASE WHEN q IS NULL THEN [] ELSE [q] END |
  SET x.status = 'delivered', x.caption = 'delivered: ' + x.capability_tag)
WITH DISTINCT g
// include: store_logs
// include: store_entries
RETURN g.id AS id
