// mode: write
// CALLS edges out of the symbols of the files in $paths: each call a parse resolved to a
// qualified name, linked to the symbol of that name in the same repository.
MATCH (s:Symbol {repo: $repo})
WHERE s.file IN $paths
UNWIND s.calls AS target
MATCH (t:Symbol {repo: $repo, qname: target})
MERGE (s)-[:CALLS]->(t)
RETURN count(*) AS linked
