// mode: write
// template: label
// Imports a batch of nodes of one label: merge by id, imported properties win.
UNWIND $rows AS row
MERGE (n:{{label}} {id: row.id})
SET n += row.props
RETURN count(n) AS merged
