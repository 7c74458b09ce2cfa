// Stores a goal pattern ($pattern: null, or its id, summary, caption, normalized
// summary, constraint signature, the summary's embedding and the neighbours
// found before it was stored), inside the commit that carries it. Idempotent: one
// pattern per normalized summary and signature. It is linked to each neighbour by
// SIMILAR_TO edges both ways (similarity is symmetric), their score refreshed.
WITH *
CALL {
  UNWIND (CASE WHEN $pattern IS NULL THEN [] ELSE [$pattern] END) AS pat
  MERGE (made_pattern:GoalPattern {id: pat.id})
  ON CREATE SET made_pattern.summary = pat.summary, made_pattern.caption = pat.caption,
                made_pattern.normalized = pat.normalized, made_pattern.signature = pat.signature,
                made_pattern.embedding = pat.vector
  WITH made_pattern, pat
  UNWIND pat.neighbours AS near
  MATCH (b:GoalPattern {id: near.id})
  MERGE (made_pattern)-[s:SIMILAR_TO]->(b)
  SET s.score = near.similarity
  MERGE (b)-[t:SIMILAR_TO]->(made_pattern)
  SET t.score = near.similarity
}
