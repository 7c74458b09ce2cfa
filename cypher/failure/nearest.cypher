// mode: read
// Failure modes whose embedded cause is near a new diagnosis, most similar first
// (similarity (1 + cos) / 2 on both stores; the search is the dialect's fragment).
// include: failure_modes_near
WHERE similarity >= $threshold
RETURN node.id AS id, node.name AS name, similarity
ORDER BY similarity DESC, id
