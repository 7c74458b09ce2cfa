// mode: read
// Runs, newest first, with their root goal, who drives them and what they spent (the sum
// of their goals' spends, as `kernel status RUN` counts it), and that spend split by who
// was paid: the model, the sandbox, the tools BUILD and HIRE added.
MATCH (run:Run)
OPTIONAL MATCH (run)-[:ROOT]->(root:Goal)
OPTIONAL MATCH (g:Goal {run_id: run.id})
WITH run, root, sum(coalesce(g.cost_spent, 0)) AS spent
RETURN run.id AS id, run.started_at AS started_at, run.seq AS commits,
       root.summary AS goal, root.status AS status, run.lease_holder AS holder,
       run.lease_expires AS expires, run.stopped AS stopped, run.config AS config,
       spent, coalesce(run.cost_spent_model, 0) AS spent_model,
       coalesce(run.cost_spent_sandbox, 0) AS spent_sandbox,
       coalesce(run.cost_spent_tool, 0) AS spent_tool
ORDER BY run.id DESC
