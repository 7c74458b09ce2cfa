// mode: read
// The newest run whose root goal has a final artifact (what `kernel artifact show latest`
// means: the newest plan has none).
MATCH (r:Run)-[:ROOT]->(g:Goal)
WHERE g.final_artifact_id IS NOT NULL
RETURN r.id AS id
ORDER BY r.id DESC
LIMIT 1
