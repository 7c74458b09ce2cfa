// mode: read
// The verification stored on a weighed candidate (the chosen one is read back when a
// crash came between the weighing and the attempt's verification).
MATCH (art:Artifact {id: $artifact_id})
RETURN art.verification AS verification
