// mode: write
// template: type, from_label, to_label
// Imports unkeyed relationships: at most one of this type between two nodes.
UNWIND $rows AS row
MATCH (a:{{from_label}} {id: row.from_id})
MATCH (b:{{to_label}} {id: row.to_id})
MERGE (a)-[r:{{type}}]->(b)
SET r += row.props
RETURN count(r) AS merged
