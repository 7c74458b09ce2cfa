// mode: write
// Makes the graph exist (the embedded server creates a graph key on first write).
RETURN 1 AS created
