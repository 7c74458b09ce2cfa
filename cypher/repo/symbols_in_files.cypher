// mode: read
// The symbols defined in the files $paths of repository $repo: where a change to those
// files starts the impact traversal.
MATCH (s:Symbol {repo: $repo})
WHERE s.file IN $paths
RETURN s.id AS id, s.qname AS qname, s.kind AS kind, s.file AS file, s.line AS line,
       s.signature AS signature
ORDER BY qname
