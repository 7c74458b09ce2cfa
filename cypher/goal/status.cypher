// mode: read
// Just a goal's status (what a transition is validated against).
MATCH (g:Goal {id: $goal_id})
RETURN g.status AS status
