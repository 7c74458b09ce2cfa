// mode: write
// Starts a run: its id and start time are the only fresh inputs, recorded here. A run
// with a proposer is PROPOSED_BY the Actor that stands for it (one per kind and model
// or script), and carries both as properties.
CREATE (run:Run {id: $run_id, seq: 0, proposals: 0, base_ms: $base_ms, started_at: $started_at,
                 caption: $caption, config: $config})
SET run.proposer = $proposer, run.model = $model
WITH run
FOREACH (_ IN CASE WHEN $proposer IS NULL THEN [] ELSE [1] END |
  MERGE (who:Actor {id: 'actor:' + $proposer + ':' + $model})
  ON CREATE SET who.name = $proposer + ':' + $model, who.caption = $model,
                who.kind = $proposer, who.model = $model
  CREATE (run)-[:PROPOSED_BY]->(who))
RETURN run.id AS id
