// mode: write
// changes: nothing
// SIMILAR_TO edges between a pattern and its neighbours, both ways (similarity is
// symmetric), with their score (refreshed).
MATCH (a:GoalPattern {id: $id})
UNWIND $neighbours AS n
MATCH (b:GoalPattern {id: n.id})
MERGE (a)-[s:SIMILAR_TO]->(b)
SET s.score = n.similarity
MERGE (b)-[t:SIMILAR_TO]->(a)
SET t.score = n.similarity
RETURN count(b) AS linked
