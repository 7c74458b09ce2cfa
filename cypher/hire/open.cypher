// mode: write
// Step 11: parks a goal on a capability request, in one commit. The request is found by
// its fingerprint (another goal may have raised the same one: it is never asked twice)
// or created; the goal moves from $from to $to with its changes (its `awaiting` names
// the request).
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = $from
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g.status = $to, g += $changes
FOREACH (removal IN $removals | SET g += removal)
MERGE (q:CapabilityRequest {fingerprint: $fingerprint})
ON CREATE SET q += $props
MERGE (c:Capability {id: 'capability:' + $capability_tag})
ON CREATE SET c.tag = $capability_tag, c.caption = $capability_tag
MERGE (q)-[:ASKS_FOR]->(c)
MERGE (q)-[:RAISED_FOR]->(g)
RETURN q.id AS id, q.status AS status
