// mode: write
// Empties the graph and keeps its indexes and constraints, one batch of nodes (with their
// relationships) per call; the caller repeats it until it deletes nothing.
MATCH (n)
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(n) AS deleted
