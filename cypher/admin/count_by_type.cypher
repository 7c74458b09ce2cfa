// mode: read
// Relationship counts per type, for `kernel status`.
MATCH ()-[r]->()
RETURN type(r) AS type, count(r) AS relationships
ORDER BY type
