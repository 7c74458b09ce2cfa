// mode: write
// template: type, from_label, to_label
// Imports unkeyed relationships: at most one *unkeyed* relationship of this type
// joins two nodes, and a keyed one (with an id) between them is left alone. Returns how
// many rows found both endpoints (the importer checks it against the rows it sent).
UNWIND $rows AS row
MATCH (a:{{from_label}} {id: row.from_id})
MATCH (b:{{to_label}} {id: row.to_id})
OPTIONAL MATCH (a)-[old:{{type}}]->(b)
WHERE old.id IS NULL
FOREACH (_ IN CASE WHEN old IS NULL THEN [1] ELSE [] END |
  CREATE (a)-[fresh:{{type}}]->(b)
  SET fresh += row.props)
FOREACH (_ IN CASE WHEN old IS NULL THEN [] ELSE [1] END |
  SET old += row.props)
RETURN count(DISTINCT row) AS merged
