// mode: read
// Node counts per label, for `kernel status`.
MATCH (n)
RETURN labels(n)[0] AS label, count(n) AS nodes
ORDER BY label
