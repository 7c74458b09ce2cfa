// mode: read
// The symbols of one repository whose embedding (name, signature, docstring) is nearest
// to a goal's, similarity (1 + cos) / 2 in [0, 1]; the index spans every repository, so
// $candidates are fetched before the repository filter. Test code is not embedded.
// include: symbols_near
WHERE node.repo = $repo
RETURN node.qname AS name, node.file AS file, node.line AS line, similarity
ORDER BY similarity DESC, file, line
LIMIT $k
