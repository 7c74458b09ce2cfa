// The $candidates symbols nearest to $vector (of every ingested repository), as (node,
// similarity) with the similarity Neo4j reports, (1 + cos) / 2, from FalkorDB's cosine
// distance 1 - cos (the index holds vecf32 values).
CALL db.idx.vector.queryNodes('Symbol', 'embedding', $candidates, vecf32($vector))
YIELD node, score
WITH node, 1.0 - score / 2.0 AS similarity
