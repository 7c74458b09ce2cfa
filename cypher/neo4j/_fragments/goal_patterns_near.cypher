// The $candidates goal patterns nearest to $vector, as (node, similarity): Neo4j's
// cosine score, (1 + cos) / 2.
CALL db.index.vector.queryNodes('goal_pattern_embedding', $candidates, $vector)
YIELD node, score
WITH node, score AS similarity
