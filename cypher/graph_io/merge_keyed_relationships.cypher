// mode: write
// template: type, from_label, to_label
// Imports keyed relationships (several of one type may join the same two nodes).
UNWIND $rows AS row
MATCH (a:{{from_label}} {id: row.from_id})
MATCH (b:{{to_label}} {id: row.to_id})
MERGE (a)-[r:{{type}} {id: row.key}]->(b)
SET r += row.props
RETURN count(r) AS merged
