// mode: write
// Benchmark (kernel bench kg): synthetic attempts with the edges verification writes
// (TRIED_FOR, USED, SUCCEEDED_ON / FAILED_ON, FAILED_BECAUSE).
UNWIND $rows AS row
MATCH (g:Goal {id: row.goal}), (p:GoalPattern {id: row.pattern}), (r:Resolver {id: row.resolver})
CREATE (a:Attempt {id: row.id, verdict: CASE WHEN row.ok THEN 'SAT' ELSE 'UNSAT' END,
                   sigma_v: row.sigma, cost: row.cost, failure_mode: row.failure})
CREATE (a)-[:FOR]->(g)
CREATE (a)-[:USED]->(r)
CREATE (a)-[:TRIED_FOR]->(p)
FOREACH (_ IN CASE WHEN row.ok THEN [1] ELSE [] END |
  CREATE (r)-[:SUCCEEDED_ON {id: row.id, sigma_v: row.sigma, cost: row.cost, time: 1,
                             modality: 'text'}]->(p))
FOREACH (_ IN CASE WHEN row.ok THEN [] ELSE [1] END |
  CREATE (r)-[:FAILED_ON {id: row.id, sigma_v: row.sigma, cost: row.cost, time: 1,
                          modality: 'text', failure_mode: row.failure}]->(p))
WITH a, row
MATCH (f:FailureMode {id: coalesce(row.failure, '-')})
CREATE (a)-[:FAILED_BECAUSE]->(f)
RETURN count(a) AS merged
