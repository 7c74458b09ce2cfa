// mode: schema
// Blocks until every index is online, so a vector query right after init sees it.
CALL db.awaitIndexes(300)
