// mode: write
// changes: nothing
// A goal pattern: one per normalized summary and constraint signature, with the
// summary's embedding. Idempotent.
MERGE (p:GoalPattern {id: $id})
ON CREATE SET p.summary = $summary, p.caption = $caption, p.normalized = $normalized,
              p.signature = $signature, p.embedding = $vector
RETURN p.id AS id
