// mode: read
// The $candidates goal patterns nearest to a vector, similarity (1 + cos) / 2 in [0, 1].
// include: goal_patterns_near
RETURN node.id AS id, similarity
ORDER BY similarity DESC, id
