// mode: read
// A run's refusals, newest first (what stopped which goal and what would let it proceed).
MATCH (e:LedgerEntry {run_id: $run_id})
WHERE e.kind = 'refusal'
RETURN e.index AS index, e.goal_id AS goal_id, e.operation AS reason, e.content AS content
ORDER BY index DESC
