// mode: read
// The goals a goal depends on, in creation order, with the output each one resolved with
// (what the dependent goal is shown as its inputs).
MATCH (g:Goal {id: $goal_id})-[:DEPENDS_ON]->(d:Goal)
RETURN d.id AS id, d.summary AS summary, d.output_artifact_id AS artifact_id
ORDER BY d.seq, id
