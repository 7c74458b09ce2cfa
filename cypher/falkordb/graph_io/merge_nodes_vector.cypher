// mode: write
// template: label, prop
// Imports nodes that carry an embedding; the vector index needs vecf32 values.
UNWIND $rows AS row
MERGE (n:{{label}} {id: row.id})
SET n += row.props
FOREACH (v IN CASE WHEN row.vector IS NULL THEN [] ELSE [row.vector] END |
  SET n.{{prop}} = vecf32(v))
RETURN count(n) AS merged
