// mode: write
// Benchmark (kernel bench kg): synthetic resolvers and the capabilities they provide.
UNWIND $rows AS row
CREATE (r:Resolver {id: row.id, label: row.id, caption: row.id, input_types: ['text'],
                    built_by: 'system'})
WITH r, row
UNWIND row.capabilities AS tag
MERGE (c:Capability {id: 'capability:' + tag})
ON CREATE SET c.tag = tag, c.caption = tag
CREATE (r)-[:PROVIDES]->(c)
RETURN count(DISTINCT r) AS merged
