// The $candidates symbols nearest to $vector (of every ingested repository), as (node,
// similarity): Neo4j's cosine score, (1 + cos) / 2.
CALL db.index.vector.queryNodes('symbol_embedding', $candidates, $vector)
YIELD node, score
WITH node, score AS similarity
