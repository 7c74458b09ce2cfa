// mode: read
// Every index by name, with the constraint that owns it (a unique id's backing index is
// named as its constraint) and a vector index's configuration: one round trip tells
// which of the ontology's indexes and constraints exist and which vector index was
// made with other settings.
SHOW INDEXES YIELD name, type, owningConstraint, options, state
RETURN name, type, owningConstraint AS owner, options.indexConfig AS config, state
