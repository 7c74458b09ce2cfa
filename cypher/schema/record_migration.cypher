// mode: write
// Records one applied migration and moves the schema version, in one statement.
MERGE (m:Migration {id: $id})
ON CREATE SET m.applied_at = $applied_at
SET m.name = $name, m.version = $version, m.caption = $name
WITH m
MERGE (s:SchemaInfo {id: 'schema:kernel'})
SET s.version = $version, s.caption = 'schema v' + toString($version)
RETURN s.version AS version
