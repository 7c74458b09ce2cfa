// mode: schema
// template: index_name
// Drops an index so that it is made again with the current configuration; Neo4j fills
// the new one from the nodes' stored properties.
DROP INDEX {{index_name}} IF EXISTS
