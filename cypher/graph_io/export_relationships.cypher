// mode: read
// template: label
// Outgoing relationships of a page of nodes, in the export's deterministic order.
MATCH (a:{{label}})-[r]->(b)
WHERE a.id IN $ids
RETURN a.id AS from_id, type(r) AS type, labels(b)[0] AS to_label, b.id AS to_id,
       r.id AS key, properties(r) AS props
ORDER BY from_id, type, to_label, to_id, key
