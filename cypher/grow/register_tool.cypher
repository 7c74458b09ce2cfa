// mode: write
// Step 10/11: registers a tool the system built or a human gave, with its provenance
// (built_by a resolver or a human, implemented_by its code, composed_of its steps,
// replaced_by from the tools that failed on the goal; each capability of its parts
// ENABLES each capability it provides), closes the capability request it
// answers, and changes the adopting goal, all in one commit. The guards come first:
// nothing is written unless the run is at $seq and the goal is still in $status.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq AND g.status = $status
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue), g += $changes
FOREACH (removal IN $removals | SET g += removal)
MERGE (r:Resolver {id: $id})
SET r += $props
WITH g, r
UNWIND $capabilities AS tag
MERGE (c:Capability {id: 'capability:' + tag})
ON CREATE SET c.tag = tag, c.caption = tag
MERGE (r)-[:PROVIDES]->(c)
WITH DISTINCT g, r
OPTIONAL MATCH (builder:Resolver {id: $builder_id})
OPTIONAL MATCH (human:Actor {id: $builder_id})
FOREACH (b IN CASE WHEN builder IS NULL THEN [] ELSE [builder] END |
  MERGE (r)-[:BUILT_BY]->(b))
FOREACH (h IN CASE WHEN human IS NULL THEN [] ELSE [human] END |
  MERGE (r)-[:BUILT_BY]->(h))
WITH DISTINCT g, r
OPTIONAL MATCH (code:Artifact {id: $artifact_id})
FOREACH (a IN CASE WHEN code IS NULL THEN [] ELSE [code] END |
  MERGE (r)-[:IMPLEMENTED_BY]->(a))
WITH DISTINCT g, r
OPTIONAL MATCH (q:CapabilityRequest {id: $request_id})
FOREACH (x IN CASE WHEN q IS NULL THEN [] ELSE [q] END |
  SET x.status = 'delivered', x.resolver_id = r.id, x.caption = 'delivered: ' + x.capability_tag
  MERGE (x)-[:ANSWERED_BY]->(r))
WITH DISTINCT g, r
UNWIND (CASE WHEN size($parts) = 0 THEN [null] ELSE $parts END) AS part
OPTIONAL MATCH (p:Resolver {id: part.id})
FOREACH (x IN CASE WHEN p IS NULL THEN [] ELSE [p] END |
  MERGE (r)-[e:COMPOSED_OF {order: part.order}]->(x)
  SET e.role = part.role)
WITH DISTINCT g, r
OPTIONAL MATCH (r)-[:COMPOSED_OF]->(:Resolver)-[:PROVIDES]->(pc:Capability)
OPTIONAL MATCH (r)-[:PROVIDES]->(rc:Capability)
FOREACH (x IN CASE WHEN pc IS NULL OR rc IS NULL OR pc.id = rc.id THEN [] ELSE [pc] END |
  MERGE (x)-[e:ENABLES]->(rc)
  SET e.via = r.id)
WITH DISTINCT g, r
UNWIND (CASE WHEN size($replaces) = 0 THEN [null] ELSE $replaces END) AS old_id
OPTIONAL MATCH (old:Resolver {id: old_id})
FOREACH (x IN CASE WHEN old IS NULL THEN [] ELSE [old] END |
  MERGE (x)-[e:REPLACED_BY]->(r)
  SET e.goal_id = g.id)
RETURN DISTINCT r.id AS id
