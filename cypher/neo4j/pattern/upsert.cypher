// mode: write
// changes: nothing
// A goal pattern: one per normalized summary and constraint signature, with the
// summary's embedding. Idempotent. It is
// linked to its neighbours ($neighbours: ids and similarity, found before it is stored)
// by SIMILAR_TO edges both ways (similarity is symmetric), their score refreshed.
MERGE (p:GoalPattern {id: $id})
ON CREATE SET p.summary = $summary, p.caption = $caption, p.normalized = $normalized,
              p.signature = $signature, p.embedding = $vector
WITH p
CALL {
  WITH p
  UNWIND $neighbours AS n
  MATCH (b:GoalPattern {id: n.id})
  MERGE (p)-[s:SIMILAR_TO]->(b)
  SET s.score = n.similarity
  MERGE (b)-[t:SIMILAR_TO]->(p)
  SET t.score = n.similarity
}
RETURN p.id AS id
