// mode: write
// changes: goal/get(touched), attempt/of_goal(touched)
// refreshes: goal/get
// Opens an attempt ($attempt, see the open_attempt fragment) as its own commit, when
// no step commit of its goal could carry it: attempt number attempt_count + 1 of the
// goal, at most max_attempts.
MATCH (run:Run {id: $run_id}), (g:Goal {id: $goal_id})
WHERE run.seq = $seq
// include: attempt_guard
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue)
// include: open_attempt
WITH run, g
// include: goal_family
// include: goal_view
RETURN $attempt.id AS id, touched, view
