// mode: schema
// template: label, prop, index_name, dimensions
// Cosine vector index over list<float> embeddings.
CREATE VECTOR INDEX {{index_name}} IF NOT EXISTS
FOR (n:{{label}}) ON (n.{{prop}})
OPTIONS {indexConfig: {`vector.dimensions`: {{dimensions}}, `vector.similarity_function`: 'cosine'}}
