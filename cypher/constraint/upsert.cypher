// mode: write
// changes: nothing
// Creates constraints by content id; an existing one keeps its first provenance.
UNWIND $rows AS row
MERGE (c:Constraint {id: row.id})
ON CREATE SET c.type = row.type, c.domain = row.domain, c.title = row.title,
              c.payload = row.payload, c.provenance = row.provenance, c.caption = row.title
RETURN count(c) AS merged
