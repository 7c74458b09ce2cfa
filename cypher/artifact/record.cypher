// mode: read
// An artifact's node as it is now: what registration wrote and what weighing it as a
// candidate added (verdict, rank, status), for showing it.
MATCH (a:Artifact {id: $artifact_id})
RETURN properties(a) AS artifact
