// mode: write
// Remembers the last imported line of a file, identified by its content hash.
MERGE (c:ImportCheckpoint {id: $id})
SET c.line = $line, c.done = $done, c.source = $source, c.caption = $caption
RETURN c.line AS line
