// mode: read
// The schema version this graph was migrated to (no row: never initialised).
MATCH (s:SchemaInfo {id: 'schema:kernel'})
RETURN s.version AS version
