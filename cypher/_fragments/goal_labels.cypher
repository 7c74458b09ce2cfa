// Labels that say where the goal bound as `g` stands, so that a style (Neo4j Browser's)
// can colour it: :Resolved, :Failed (infeasible), :Parked (gated on a build or a person)
// and :Stale (superseded by a reopened decomposition). Set from its properties by the
// commit that changes them, so the two never disagree.
REMOVE g:Resolved:Failed:Parked:Stale
FOREACH (_ IN CASE WHEN g.status = 'resolved' THEN [1] ELSE [] END | SET g:Resolved)
FOREACH (_ IN CASE WHEN g.status = 'infeasible' THEN [1] ELSE [] END | SET g:Failed)
FOREACH (_ IN CASE WHEN g.status = 'gated' THEN [1] ELSE [] END | SET g:Parked)
FOREACH (_ IN CASE WHEN coalesce(g.stale, false) THEN [1] ELSE [] END | SET g:Stale)
