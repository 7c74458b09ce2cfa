// mode: schema
// template: label, prop, index_name, dimensions
// Cosine vector index over list<float> embeddings, unquantized: Neo4j 5.26 quantizes by
// default, which moves scores by up to 1e-3 and would rank near-ties apart from the
// embedded store.
CREATE VECTOR INDEX {{index_name}} IF NOT EXISTS
FOR (n:{{label}}) ON (n.{{prop}})
OPTIONS {indexConfig: {`vector.dimensions`: {{dimensions}}, `vector.similarity_function`: 'cosine',
                       `vector.quantization.enabled`: false}}
