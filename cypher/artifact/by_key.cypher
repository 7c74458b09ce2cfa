// mode: read
// cache: read
// An artifact already registered under this key (registration is idempotent).
MATCH (a:Artifact {key: $key})
RETURN a.id AS id
