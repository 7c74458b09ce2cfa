// mode: read
// template: label
// One page of a label's node ids in id order (the relationship pass needs no properties).
MATCH (n:{{label}})
WHERE n.id > $after
RETURN n.id AS id
ORDER BY id
LIMIT $limit
