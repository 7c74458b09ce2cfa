// mode: read
// How many nodes and edges a repository's graph holds, by label and by type.
MATCH (n:File {repo: $repo}) RETURN 'File' AS name, count(n) AS count
UNION ALL
MATCH (n:Symbol {repo: $repo}) RETURN 'Symbol' AS name, count(n) AS count
UNION ALL
MATCH (n:Chunk {repo: $repo}) RETURN 'Chunk' AS name, count(n) AS count
UNION ALL
MATCH (:File {repo: $repo})-[r:HOLDS]->() RETURN 'HOLDS' AS name, count(r) AS count
UNION ALL
MATCH (:File {repo: $repo})-[r:DEFINES]->() RETURN 'DEFINES' AS name, count(r) AS count
UNION ALL
MATCH (:File {repo: $repo})-[r:IMPORTS]->() RETURN 'IMPORTS' AS name, count(r) AS count
UNION ALL
MATCH (:Symbol {repo: $repo})-[r:CALLS]->() RETURN 'CALLS' AS name, count(r) AS count
UNION ALL
MATCH (:Symbol {repo: $repo})-[r:TESTS]->() RETURN 'TESTS' AS name, count(r) AS count
