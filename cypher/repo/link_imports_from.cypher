// mode: write
// IMPORTS edges out of the files in $paths to the repository's files whose module they
// import.
MATCH (f:File {repo: $repo})
WHERE f.path IN $paths
UNWIND f.imports AS imported
MATCH (g:File {repo: $repo, module: imported})
WHERE g.id <> f.id
MERGE (f)-[:IMPORTS]->(g)
RETURN count(*) AS linked
