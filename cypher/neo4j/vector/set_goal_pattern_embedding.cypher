// mode: write
// Creates or updates a goal pattern with its embedding.
MERGE (p:GoalPattern {id: $id})
SET p.summary = $summary, p.caption = coalesce(p.caption, left($summary, 80)), p.embedding = $vector
RETURN p.id AS id
