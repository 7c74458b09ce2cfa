// mode: read
// The k goal patterns nearest to a vector; Neo4j's cosine score is (1 + cos) / 2.
CALL db.index.vector.queryNodes('goal_pattern_embedding', $k, $vector)
YIELD node, score
RETURN node.id AS id, score AS similarity
ORDER BY similarity DESC, id
