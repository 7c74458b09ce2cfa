// mode: read
// Failure modes whose embedded cause is near a new diagnosis, most similar first;
// similarity is Neo4j's cosine score, (1 + cos) / 2.
CALL db.index.vector.queryNodes('failure_mode_embedding', $k, $vector)
YIELD node, score
WITH node, score AS similarity
WHERE similarity >= $threshold
RETURN node.id AS id, node.name AS name, similarity
ORDER BY similarity DESC, id
