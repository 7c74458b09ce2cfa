// mode: read
// Every migration applied to this graph, oldest first.
MATCH (m:Migration)
RETURN m.id AS id, m.version AS version, m.name AS name, m.applied_at AS applied_at
ORDER BY m.version
