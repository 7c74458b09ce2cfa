// mode: write
// TESTS edges: a test function to each non-test symbol it calls directly, for the calls
// that start or end in the files in $paths.
MATCH (s:Symbol {repo: $repo, kind: 'test'})-[:CALLS]->(t:Symbol)
WHERE (s.file IN $paths OR t.file IN $paths) AND NOT t.in_test
MERGE (s)-[:TESTS]->(t)
RETURN count(*) AS linked
