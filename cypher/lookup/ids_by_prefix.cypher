// mode: read
// template: label
// Ids of one label that start with what a person typed (a unique prefix names a node).
MATCH (n:{{label}})
WHERE n.id STARTS WITH $prefix
RETURN n.id AS id
ORDER BY id
LIMIT $limit
