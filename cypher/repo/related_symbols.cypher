// mode: read
// The symbols and files a goal names: symbols whose name, and files whose base name
// (without its extension), is one of $words (lowercase).
MATCH (s:Symbol {repo: $repo})
WHERE toLower(s.name) IN $words
RETURN 'symbol' AS kind, s.qname AS name, s.file AS file, s.line AS line
UNION
MATCH (f:File {repo: $repo})
WHERE toLower(f.stem) IN $words
RETURN 'file' AS kind, f.path AS name, f.path AS file, 1 AS line
