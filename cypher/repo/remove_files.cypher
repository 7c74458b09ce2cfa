// mode: write
// Files no longer in the repository, with their symbols and chunks.
MATCH (f:File {repo: $repo})
WHERE f.path IN $paths
OPTIONAL MATCH (f)-[:DEFINES|HOLDS]->(part)
WITH f, collect(part) AS parts
FOREACH (p IN parts | DETACH DELETE p)
DETACH DELETE f
RETURN count(*) AS removed
