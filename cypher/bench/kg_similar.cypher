// mode: write
// Benchmark (kernel bench kg): SIMILAR_TO edges between synthetic patterns.
UNWIND $rows AS row
MATCH (a:GoalPattern {id: row.a}), (b:GoalPattern {id: row.b})
CREATE (a)-[:SIMILAR_TO {score: row.score}]->(b)
RETURN count(a) AS merged
