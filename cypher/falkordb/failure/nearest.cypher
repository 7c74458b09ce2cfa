// mode: read
// Failure modes whose embedded cause is near a new diagnosis, most similar first, with
// the similarity Neo4j reports: (1 + cos) / 2, from FalkorDB's cosine distance 1 - cos.
CALL db.idx.vector.queryNodes('FailureMode', 'embedding', $k, vecf32($vector))
YIELD node, score
WITH node, 1.0 - score / 2.0 AS similarity
WHERE similarity >= $threshold
RETURN node.id AS id, node.name AS name, similarity
ORDER BY similarity DESC, id
