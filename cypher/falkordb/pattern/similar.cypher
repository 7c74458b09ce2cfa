// mode: read
// Goal patterns near a summary embedding that share its constraint signature (others
// are dropped before ranking, so structure decides before words), with the similarity
// Neo4j reports: (1 + cos) / 2, from FalkorDB's cosine distance 1 - cos.
CALL db.idx.vector.queryNodes('GoalPattern', 'embedding', $candidates, vecf32($vector))
YIELD node, score
WITH node, 1.0 - score / 2.0 AS similarity
WHERE node.signature = $signature AND node.id <> $exclude AND similarity >= $threshold
RETURN node.id AS id, node.summary AS summary, similarity
ORDER BY similarity DESC, id
LIMIT $k
