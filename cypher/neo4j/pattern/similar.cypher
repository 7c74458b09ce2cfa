// mode: read
// Goal patterns near a summary embedding that share its constraint signature (others
// are dropped before ranking, so structure decides before words); similarity is
// Neo4j's cosine score, (1 + cos) / 2.
CALL db.index.vector.queryNodes('goal_pattern_embedding', $candidates, $vector)
YIELD node, score
WITH node, score AS similarity
WHERE node.signature = $signature AND node.id <> $exclude AND similarity >= $threshold
RETURN node.id AS id, node.summary AS summary, similarity
ORDER BY similarity DESC, id
LIMIT $k
