// mode: read
// The candidates a goal's attempt weighed, in rank order, with who offered each (a
// person's name, or the run's proposer) and its verification: what `kernel solve`
// reports about the suggestions.
MATCH (art:Artifact {goal_id: $goal_id})
WHERE art.candidate_for IS NOT NULL
OPTIONAL MATCH (art)-[:PROPOSED_BY]->(who:Actor)
RETURN art.id AS artifact_id, art.status AS status, art.rank AS rank,
       art.verdict AS verdict, art.sigma_v AS sigma_v, art.verification AS verification,
       who.kind AS author_kind, who.name AS author, art.metadata AS metadata
ORDER BY rank
