// mode: read
// Goal patterns near a summary embedding that share its constraint signature (others
// are dropped before ranking, so structure decides before words); similarity
// (1 + cos) / 2 on both stores.
// include: goal_patterns_near
WHERE node.signature = $signature AND node.id <> $exclude AND similarity >= $threshold
RETURN node.id AS id, node.summary AS summary, similarity
ORDER BY similarity DESC, id
LIMIT $k
