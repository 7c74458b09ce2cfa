// mode: schema
// template: type
// An index on a relationship type's `id`, made for every type of the ontology. Besides
// serving lookups by id, it registers the type: FalkorDB plans a MATCH on a type the graph
// has never held as matching nothing, even when an earlier clause of the same statement
// has just created such an edge (a commit that ends by reading back the goal it changed).
CREATE INDEX FOR ()-[r:{{type}}]-() ON (r.id)
