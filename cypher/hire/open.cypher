// mode: write
// Step 11: parks a goal on a capability request, in one commit. The request is found by
// its fingerprint (another goal may have raised the same one: it is never asked twice)
// or created; the goal moves from $from to $to with its changes (its `awaiting` names
// the request). With $supersede (step 1's questions, one after another), the goal's
// earlier request of the same tag, answered by now, is marked delivered.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = $from
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = $to, g += $changes
FOREACH (removal IN $removals | SET g += removal)
// include: goal_labels
WITH g
OPTIONAL MATCH (old:CapabilityRequest {capability_tag: $capability_tag})-[:RAISED_FOR]->(g)
WHERE $supersede AND old.status IN ['requested', 'answered'] AND old.fingerprint <> $fingerprint
FOREACH (x IN CASE WHEN old IS NULL THEN [] ELSE [old] END |
  SET x.status = 'delivered', x.caption = 'delivered: ' + x.capability_tag)
WITH DISTINCT g
MERGE (q:CapabilityRequest {fingerprint: $fingerprint})
ON CREATE SET q += $props
MERGE (c:Capability {id: 'capability:' + $capability_tag})
ON CREATE SET c.tag = $capability_tag, c.caption = $capability_tag
MERGE (q)-[:ASKS_FOR]->(c)
MERGE (q)-[:RAISED_FOR]->(g)
RETURN q.id AS id, q.status AS status
