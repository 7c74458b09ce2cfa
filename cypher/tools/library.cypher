// mode: read
// The tool library: tools the system built or a person supplied ($id: one of them, or
// null for all), with the capabilities they provide, who built or supplied them, the
// request they answered, their parts, what they replaced and what replaced them, the
// artifact holding their code, and how the attempts that used them ended. A built
// tool's code derives from the output of the attempt that wrote it: its checks are that
// attempt's verification.
// (toInteger: the embedded store's sum() of integers is a float.)
MATCH (r:Resolver)
WHERE r.built_by IN ['system', 'human'] AND ($id IS NULL OR r.id = $id)
OPTIONAL MATCH (r)-[:PROVIDES]->(c:Capability)
WITH r, collect(DISTINCT c.tag) AS provides
OPTIONAL MATCH (r)-[:BUILT_BY]->(b)
WITH r, provides, collect(DISTINCT b.id) AS builders
OPTIONAL MATCH (q:CapabilityRequest)-[:ANSWERED_BY]->(r)
WITH r, provides, builders, collect(DISTINCT q.id) AS requests
OPTIONAL MATCH (r)-[part:COMPOSED_OF]->(p:Resolver)
WITH r, provides, builders, requests,
     collect(DISTINCT {order: part.order, id: p.id}) AS parts
OPTIONAL MATCH (r)-[:REPLACED_BY]->(newer:Resolver)
WITH r, provides, builders, requests, parts, collect(DISTINCT newer.id) AS replaced_by
OPTIONAL MATCH (older:Resolver)-[:REPLACED_BY]->(r)
WITH r, provides, builders, requests, parts, replaced_by,
     collect(DISTINCT older.id) AS replaces
OPTIONAL MATCH (r)-[:IMPLEMENTED_BY]->(code:Artifact)
OPTIONAL MATCH (code)-[:DERIVED_FROM]->(:Artifact)<-[:PRODUCED]-(made:Attempt)
WITH r, provides, builders, requests, parts, replaced_by, replaces,
     min(code.id) AS code_id,
     collect(DISTINCT {attempt: made.id, verdict: made.verdict,
                       verification: made.verification}) AS checks
OPTIONAL MATCH (a:Attempt)-[:USED]->(r)
RETURN r.id AS id, r.label AS label, r.built_by AS origin, r.built_for_node_id AS built_for,
       r.metadata AS metadata, provides, builders, requests, parts, replaced_by, replaces,
       code_id, checks, count(a) AS uses,
       toInteger(sum(CASE WHEN a.verdict = 'SAT' THEN 1 ELSE 0 END)) AS passed,
       toInteger(sum(CASE WHEN a.verdict = 'UNSAT' THEN 1 ELSE 0 END)) AS failed
ORDER BY id
