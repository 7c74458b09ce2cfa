// mode: write
// What a changed file's last parse wrote (its symbols, chunks and imports), before its
// new facts are stored. Calls into its old symbols go with them and are linked again.
MATCH (f:File {repo: $repo})
WHERE f.path IN $paths
OPTIONAL MATCH (f)-[:DEFINES|HOLDS]->(part)
OPTIONAL MATCH (f)-[i:IMPORTS]->()
WITH f, collect(DISTINCT part) AS parts, collect(DISTINCT i) AS imports
FOREACH (p IN parts | DETACH DELETE p)
FOREACH (i IN imports | DELETE i)
RETURN count(f) AS cleared
