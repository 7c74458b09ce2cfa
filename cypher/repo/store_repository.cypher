// mode: write
// The repository ingested from $root, with its snapshot's tree hash and file count.
MERGE (r:Repository {id: $id})
SET r.root = $root, r.tree_hash = $tree_hash, r.files = $files, r.caption = $root
RETURN r.id AS id
