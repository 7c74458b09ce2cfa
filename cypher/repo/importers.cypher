// mode: read
// The files that import a file defining any of $ids.
MATCH (t:Symbol)<-[:DEFINES]-(g:File)<-[:IMPORTS]-(f:File)
WHERE t.id IN $ids
RETURN DISTINCT f.path AS path, f.is_test AS is_test
ORDER BY path
