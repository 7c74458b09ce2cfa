// mode: read
// The symbols that call any of $ids directly: one step of the impact traversal.
MATCH (s:Symbol)-[:CALLS]->(t:Symbol)
WHERE t.id IN $ids
RETURN DISTINCT s.id AS id, s.qname AS qname, s.kind AS kind, s.file AS file,
       s.line AS line, s.signature AS signature
ORDER BY qname
