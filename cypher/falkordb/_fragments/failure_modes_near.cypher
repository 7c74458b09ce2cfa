// The $candidates failure modes whose embedded cause is nearest to $vector, as (node,
// similarity) with the similarity Neo4j reports, (1 + cos) / 2, from FalkorDB's cosine
// distance 1 - cos.
CALL db.idx.vector.queryNodes('FailureMode', 'embedding', $candidates, vecf32($vector))
YIELD node, score
WITH node, 1.0 - score / 2.0 AS similarity
