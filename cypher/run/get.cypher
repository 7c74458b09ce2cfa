// mode: read
// A run's commit counter and recorded inputs (resume reads these).
MATCH (run:Run {id: $run_id})
OPTIONAL MATCH (run)-[:ROOT]->(root:Goal)
RETURN run.id AS id, run.seq AS seq, run.proposals AS proposals, run.base_ms AS base_ms,
       run.started_at AS started_at,
       run.config AS config, run.queue AS queue, root.id AS root_id,
       coalesce(run.cost_spent_model, 0) AS spent_model,
       coalesce(run.cost_spent_sandbox, 0) AS spent_sandbox,
       coalesce(run.cost_spent_tool, 0) AS spent_tool
