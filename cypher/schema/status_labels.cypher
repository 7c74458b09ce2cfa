// mode: write
// Migration 4, and the end of every import: each goal and attempt takes the labels its
// properties imply (goal: :Resolved, :Failed, :Parked, :Stale; attempt: :Sat, :Unsat),
// the ones a commit keeps in step (see the goal_labels fragment). Export writes a node's
// ontology label only, so these come back from what the file holds.
MATCH (g:Goal)
REMOVE g:Resolved:Failed:Parked:Stale
FOREACH (_ IN CASE WHEN g.status = 'resolved' THEN [1] ELSE [] END | SET g:Resolved)
FOREACH (_ IN CASE WHEN g.status = 'infeasible' THEN [1] ELSE [] END | SET g:Failed)
FOREACH (_ IN CASE WHEN g.status = 'gated' THEN [1] ELSE [] END | SET g:Parked)
FOREACH (_ IN CASE WHEN coalesce(g.stale, false) THEN [1] ELSE [] END | SET g:Stale)
WITH count(g) AS goals
OPTIONAL MATCH (a:Attempt)
REMOVE a:Sat:Unsat
FOREACH (_ IN CASE WHEN a.verdict = 'SAT' THEN [1] ELSE [] END | SET a:Sat)
FOREACH (_ IN CASE WHEN a.verdict = 'UNSAT' THEN [1] ELSE [] END | SET a:Unsat)
RETURN goals, count(a) AS attempts
