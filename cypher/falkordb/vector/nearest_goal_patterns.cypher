// mode: read
// The k goal patterns nearest to a vector. FalkorDB scores cosine *distance*
// (1 - cos); it is mapped to the similarity Neo4j reports, (1 + cos) / 2 in [0, 1].
CALL db.idx.vector.queryNodes('GoalPattern', 'embedding', $k, vecf32($vector))
YIELD node, score
RETURN node.id AS id, 1.0 - score / 2.0 AS similarity
ORDER BY similarity DESC, id
