// mode: read
// Existing indexes: label, indexed properties, per property the index kinds, and whether
// the index is in use yet ('OPERATIONAL') or still being built from the graph.
CALL db.indexes() YIELD label, properties, types, status
RETURN label, properties, types, status
