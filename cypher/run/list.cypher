// mode: read
// Runs, newest first, with their root goal.
MATCH (run:Run)
OPTIONAL MATCH (run)-[:ROOT]->(root:Goal)
RETURN run.id AS id, run.started_at AS started_at, run.seq AS commits,
       root.summary AS goal, root.status AS status
ORDER BY run.id DESC
