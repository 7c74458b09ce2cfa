// mode: write
// Creates or updates a goal pattern with its embedding (vecf32 for the index).
MERGE (p:GoalPattern {id: $id})
SET p.summary = $summary, p.caption = coalesce(p.caption, left($summary, 80)), p.embedding = vecf32($vector)
RETURN p.id AS id
