// mode: read
// A vector index's configuration, to tell one made before a setting changed.
SHOW VECTOR INDEXES YIELD name, options
WHERE name = $index_name
RETURN options.indexConfig AS config
