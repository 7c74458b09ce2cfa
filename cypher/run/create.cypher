// mode: write
// Starts a run: its id and start time are the only fresh inputs, recorded here.
CREATE (run:Run {id: $run_id, seq: 0, proposals: 0, base_ms: $base_ms, started_at: $started_at,
                 caption: $caption, config: $config})
RETURN run.id AS id
