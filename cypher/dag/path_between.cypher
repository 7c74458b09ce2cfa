// mode: read
// A dependency path from $from_id to $to_id, if any (adding to -> from would close a cycle).
MATCH p = (a:Goal {id: $from_id})-[:DEPENDS_ON*1..]->(b:Goal {id: $to_id})
RETURN [n IN nodes(p) | n.id] AS path
LIMIT 1
