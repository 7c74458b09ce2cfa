// mode: read
// Every goal below a decomposed goal (itself included, stale ones too: what they spent
// was spent on it), for checking its arithmetic constraints over its parts.
MATCH (d:Goal)-[:CHILD_OF*0..]->(:Goal {id: $goal_id})
RETURN d.id AS id, d.parent_id AS parent_id, coalesce(d.purpose, 'solve') AS purpose,
       coalesce(d.stale, false) AS stale, d.cost_spent AS cost_spent,
       d.time_spent AS time_spent, d.output_artifact_id AS output_artifact_id
ORDER BY id
