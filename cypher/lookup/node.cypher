// mode: read
// template: label
// One node's properties and up to 50 neighbours (for `kernel show ID`).
MATCH (n:{{label}} {id: $id})
OPTIONAL MATCH (n)-[r]-(m)
WITH n, r, m
ORDER BY type(r), m.id
WITH n, collect(CASE WHEN r IS NULL THEN null ELSE
       {type: type(r), outgoing: startNode(r) = n, label: labels(m)[0], id: m.id,
        caption: m.caption} END)[0..50] AS neighbours
RETURN properties(n) AS props, neighbours
