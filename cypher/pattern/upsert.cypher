// mode: write
// changes: nothing
// A goal pattern with its embedding and its SIMILAR_TO links (see the store_pattern
// fragment), as its own write; a step's role commit normally carries it.
WITH $pattern.id AS id
// include: store_pattern
RETURN id
