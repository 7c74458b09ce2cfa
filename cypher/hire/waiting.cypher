// mode: read
// The live goals of a run parked on a capability request, with the request.
MATCH (g:Goal {run_id: $run_id})
WHERE g.awaiting STARTS WITH 'capreq:' AND coalesce(g.stale, false) = false
  AND NOT g.status IN ['resolved', 'infeasible']
RETURN g.id AS id, g.awaiting AS awaiting
ORDER BY g.seq
