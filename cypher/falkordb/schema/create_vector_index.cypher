// mode: schema
// template: label, prop, dimensions
// Cosine vector index; FalkorDB indexes only vecf32(...) values.
CREATE VECTOR INDEX FOR (n:{{label}}) ON (n.{{prop}})
OPTIONS {dimension: {{dimensions}}, similarityFunction: 'cosine'}
