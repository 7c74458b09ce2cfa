// mode: read
// Nodes whose label is outside the kernel ontology (export skips them, so it says so).
MATCH (n)
WHERE NOT labels(n)[0] IN $known
RETURN labels(n)[0] AS label, count(n) AS nodes
ORDER BY label
