// mode: write
// changes: nothing
// A goal pattern: one per normalized summary and constraint signature, with the
// summary's embedding (vecf32, so the vector index sees it). Idempotent.
MERGE (p:GoalPattern {id: $id})
ON CREATE SET p.summary = $summary, p.caption = $caption, p.normalized = $normalized,
              p.signature = $signature, p.embedding = vecf32($vector)
RETURN p.id AS id
