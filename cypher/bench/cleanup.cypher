// mode: write
// Removes what the benchmark wrote.
MATCH (n:Run)
WHERE n.id STARTS WITH 'bench:'
DETACH DELETE n
