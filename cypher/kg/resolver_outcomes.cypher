// mode: read
// Boot query (step 4): every resolver's record on a goal's pattern and the patterns
// SIMILAR_TO it, from the SUCCEEDED_ON / FAILED_ON edges verification writes; the
// failure modes it met there; how much of the record is on this very pattern.
MATCH (p:GoalPattern {id: $pattern_id})
OPTIONAL MATCH (p)-[:SIMILAR_TO]->(q:GoalPattern)
WITH p, collect(q) AS near
UNWIND [p] + near AS gp
WITH DISTINCT p, gp
MATCH (r:Resolver)-[e:SUCCEEDED_ON|FAILED_ON]->(gp)
WITH r, e, type(e) = 'SUCCEEDED_ON' AS ok, gp.id = p.id AS here
RETURN r.id AS resolver_id, r.label AS label,
       sum(CASE WHEN ok THEN 1 ELSE 0 END) AS successes,
       sum(CASE WHEN ok THEN 0 ELSE 1 END) AS failures,
       sum(CASE WHEN ok AND here THEN 1 ELSE 0 END) AS successes_here,
       sum(CASE WHEN here AND NOT ok THEN 1 ELSE 0 END) AS failures_here,
       max(e.sigma_v) AS best_sigma_v, avg(e.cost) AS mean_cost_micros,
       collect(DISTINCT e.failure_mode) AS failure_modes
ORDER BY successes DESC, best_sigma_v DESC, resolver_id
LIMIT $k
