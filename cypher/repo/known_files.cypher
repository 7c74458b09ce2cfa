// mode: read
// The files an ingested repository held when it was last ingested, with their content
// hashes: what a new snapshot is compared with, so that only changed files are parsed.
MATCH (f:File {repo: $repo})
RETURN f.path AS path, f.sha256 AS sha256
ORDER BY path
