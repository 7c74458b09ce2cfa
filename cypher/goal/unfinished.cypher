// mode: read
// The live goals of a run that still have work, in creation order (the queue at start).
MATCH (g:Goal {run_id: $run_id})
WHERE NOT g.status IN ['resolved', 'infeasible'] AND coalesce(g.stale, false) = false
RETURN g.id AS id
ORDER BY g.seq, g.id
