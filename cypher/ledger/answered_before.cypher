// mode: read
// Reuse of an answer: the first proposal in the graph (earliest run, then chain order)
// that answered a request with this reuse key (its source, the request as that source
// sees it). Only answers asked of a source carry the key; a reuse of one does not.
MATCH (e:LedgerEntry {reuse_key: $reuse_key})
WHERE e.kind = 'proposal'
RETURN properties(e) AS entry
ORDER BY e.run_id, e.index
LIMIT 1
