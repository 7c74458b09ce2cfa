// mode: read
// The spend that already paid for a proposal, if any (spends are idempotent per proposal).
MATCH (s:BudgetEvent {proposal: $proposal})
WHERE s.kind = 'spend'
RETURN s.id AS id
