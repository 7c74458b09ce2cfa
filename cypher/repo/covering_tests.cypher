// mode: read
// The tests that cover the symbols $ids: tests among them (a test that reaches a changed
// symbol through its callers), and tests that call one of them directly.
MATCH (t:Symbol {kind: 'test'})
WHERE t.id IN $ids
RETURN t.id AS id, t.qname AS qname, t.file AS file, t.line AS line
UNION
MATCH (t:Symbol {kind: 'test'})-[:TESTS]->(x:Symbol)
WHERE x.id IN $ids
RETURN t.id AS id, t.qname AS qname, t.file AS file, t.line AS line
