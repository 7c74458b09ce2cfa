// mode: read
// cache: immutable
// An artifact as it was registered: its metadata and lineage. Only the fields written at
// registration, which never change (weighing a suggestion adds others; see
// artifact/record for the whole node).
MATCH (a:Artifact {id: $artifact_id})
RETURN {id: a.id, goal_id: a.goal_id, type: a.type, format: a.format, uri: a.uri,
        sha256: a.sha256, size_bytes: a.size_bytes, metadata: a.metadata,
        lineage: a.lineage, sigma: a.sigma} AS artifact
