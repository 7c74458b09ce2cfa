// mode: read
// The symbols $name names: by qualified name, by a dotted suffix of it, or by bare name.
MATCH (s:Symbol {repo: $repo})
WHERE s.qname = $name OR s.name = $name OR s.qname ENDS WITH $suffix
RETURN s.id AS id, s.qname AS qname, s.kind AS kind, s.file AS file, s.line AS line,
       s.signature AS signature
ORDER BY qname
