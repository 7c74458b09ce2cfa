// mode: read
// Existing indexes: label, indexed properties and, per property, the index kinds.
CALL db.indexes() YIELD label, properties, types
RETURN label, properties, types
