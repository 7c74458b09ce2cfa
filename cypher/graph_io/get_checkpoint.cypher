// mode: read
// How far an earlier import of the same file got (resumable import).
MATCH (c:ImportCheckpoint {id: $id})
RETURN c.line AS line, c.done AS done
