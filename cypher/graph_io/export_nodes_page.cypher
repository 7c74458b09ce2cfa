// mode: read
// template: label
// One page of a label's nodes in id order (keyset paging keeps export memory constant).
MATCH (n:{{label}})
WHERE n.id > $after
RETURN n.id AS id, properties(n) AS props
ORDER BY id
LIMIT $limit
