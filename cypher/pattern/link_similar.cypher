// mode: write
// SIMILAR_TO edges from a pattern to its neighbours, with their score (refreshed).
MATCH (a:GoalPattern {id: $id})
UNWIND $neighbours AS n
MATCH (b:GoalPattern {id: n.id})
MERGE (a)-[s:SIMILAR_TO]->(b)
SET s.score = n.similarity
RETURN count(b) AS linked
