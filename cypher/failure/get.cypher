// mode: read
// A failure mode by id: its name, description and where it came from.
MATCH (f:FailureMode {id: $id})
RETURN f.id AS id, f.name AS name, f.description AS description, f.source AS source
