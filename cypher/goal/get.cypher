// mode: read
// cache: read
// One goal as a step reads it (the `view` map of the goal_view fragment): one read serves
// a step's goal, its next action and its budget pre-check.
MATCH (g:Goal {id: $goal_id})
// include: goal_view
RETURN view
