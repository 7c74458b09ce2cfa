// mode: write
// IMPORTS edges from unchanged files into the files in $paths (new files among them may
// be the modules that older imports name).
MATCH (g:File {repo: $repo})
WHERE g.path IN $paths AND g.module IS NOT NULL
MATCH (f:File {repo: $repo})
WHERE NOT f.path IN $paths AND g.module IN f.imports
MERGE (f)-[:IMPORTS]->(g)
RETURN count(*) AS linked
