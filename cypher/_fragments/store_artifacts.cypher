// needs: artifacts
// instead: WITH *
// Registers the artifacts made since the run's last commit ($artifacts: each one's
// properties and the ids of the stored artifacts it was made from) inside the commit
// that carries them; each is DERIVED_FROM its inputs.
WITH *
CALL {
  UNWIND $artifacts AS made
  CREATE (made_node:Artifact)
  SET made_node = made.props
  WITH made_node, made
  UNWIND made.input_ids AS input_id
  MATCH (made_from:Artifact {id: input_id})
  MERGE (made_node)-[:DERIVED_FROM]->(made_from)
}
