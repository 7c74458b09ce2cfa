// The $candidates failure modes whose embedded cause is nearest to $vector, as (node,
// similarity): Neo4j's cosine score, (1 + cos) / 2.
CALL db.index.vector.queryNodes('failure_mode_embedding', $candidates, $vector)
YIELD node, score
WITH node, score AS similarity
