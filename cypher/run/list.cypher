// mode: read
// Runs, newest first, with their root goal and who drives them.
MATCH (run:Run)
OPTIONAL MATCH (run)-[:ROOT]->(root:Goal)
RETURN run.id AS id, run.started_at AS started_at, run.seq AS commits,
       root.summary AS goal, root.status AS status, run.lease_holder AS holder,
       run.lease_expires AS expires, run.stopped AS stopped
ORDER BY run.id DESC
