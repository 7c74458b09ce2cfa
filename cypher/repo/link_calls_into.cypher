// mode: write
// CALLS edges from the symbols of unchanged files into the symbols named $qnames (those
// of the files just parsed, whose old symbols were replaced).
MATCH (s:Symbol {repo: $repo})
WHERE NOT s.file IN $paths
UNWIND s.calls AS target
WITH s, target
WHERE target IN $qnames
MATCH (t:Symbol {repo: $repo, qname: target})
MERGE (s)-[:CALLS]->(t)
RETURN count(*) AS linked
