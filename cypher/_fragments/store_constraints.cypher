// needs: constraints
// instead: WITH *
// Stores the constraints a step identified since the run's last commit ($constraints:
// rows as constraint/upsert takes them) inside the commit that carries them. Constraints
// are named by their content: an existing one keeps its first provenance.
WITH *
CALL {
  UNWIND $constraints AS row
  MERGE (made:Constraint {id: row.id})
  ON CREATE SET made.type = row.type, made.domain = row.domain, made.title = row.title,
                made.payload = row.payload, made.provenance = row.provenance,
                made.caption = row.title
}
