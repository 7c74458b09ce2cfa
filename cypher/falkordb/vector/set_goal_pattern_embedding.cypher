// mode: write
// Creates or updates a goal pattern with its embedding (vecf32 for the index).
MERGE (p:GoalPattern {id: $id})
SET p.summary = $summary, p.embedding = vecf32($vector)
RETURN p.id AS id
