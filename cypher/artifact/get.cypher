// mode: read
// cache: immutable
// An artifact's metadata and lineage.
MATCH (a:Artifact {id: $artifact_id})
RETURN properties(a) AS artifact
