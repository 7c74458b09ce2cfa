// mode: write
// cache: keep
// Stores buffered log lines that no commit carried (a step that ended without one, the
// end of a run). Logs are observations: re-logging after a resume merges into the same
// entries.
MATCH (run:Run {id: $run_id})
// include: store_logs
RETURN run.id AS id
