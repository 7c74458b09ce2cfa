// mode: write
// Step 1 puts a question to the person: the root parks on a new goal_intake request
// (its `awaiting` names it, the dialogue so far is in its changes), and the question
// it answered before, if any, is marked delivered; one commit.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = 'pending' AND g.intake = 'open'
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    g += $changes
FOREACH (removal IN $removals | SET g += removal)
WITH g
OPTIONAL MATCH (old:CapabilityRequest {capability_tag: $capability_tag})-[:RAISED_FOR]->(g)
WHERE old.status IN ['requested', 'answered']
FOREACH (x IN CASE WHEN old IS NULL THEN [] ELSE [old] END |
  SET x.status = 'delivered', x.caption = 'delivered: ' + x.capability_tag)
WITH DISTINCT g
MERGE (q:CapabilityRequest {fingerprint: $fingerprint})
ON CREATE SET q += $props
MERGE (c:Capability {id: 'capability:' + $capability_tag})
ON CREATE SET c.tag = $capability_tag, c.caption = $capability_tag
MERGE (q)-[:ASKS_FOR]->(c)
MERGE (q)-[:RAISED_FOR]->(g)
RETURN q.id AS id
