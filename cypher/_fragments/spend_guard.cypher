// needs: spend
// The guard of a commit that carries a spend ($spend, or null) on the goal bound as `g`:
// an attempt it pays for is stored or opened by this commit ($attempt), and an output it
// records is stored or registered by it ($artifacts). It follows the statement's WHERE,
// before anything is written.
OPTIONAL MATCH (stored_attempt:Attempt {id: $spend.attempt_id})-[:FOR]->(g)
OPTIONAL MATCH (stored_output:Artifact {id: $spend.output_artifact_id})
WITH *
WHERE $spend IS NULL
   OR (($spend.attempt_id IS NULL OR stored_attempt IS NOT NULL OR $spend.attempt_id = $attempt.id)
       AND ($spend.output_artifact_id IS NULL OR stored_output IS NOT NULL
            OR $spend.output_artifact_id IN [made IN $artifacts | made.props.id]))
