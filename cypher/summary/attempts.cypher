// mode: read
// A run's attempts with their outcomes and the content hash of what they produced.
MATCH (a:Attempt)-[:FOR]->(g:Goal {run_id: $run_id})
OPTIONAL MATCH (a)-[:PRODUCED]->(out:Artifact)
RETURN a.id AS id, g.id AS goal_id, a.attempt_index AS attempt_index, a.verdict AS verdict,
       a.sigma_v AS sigma_v, a.failure_mode AS failure_mode, a.cost AS cost, a.time AS time,
       out.sha256 AS output_sha256
ORDER BY id
