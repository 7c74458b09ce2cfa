// needs: attempt
// The guard of a commit that opens an attempt ($attempt, or null) on the goal bound as
// `g`: it must be the goal's next attempt, within max_attempts. One line of a WHERE.
  AND ($attempt IS NULL OR (g.attempt_count + 1 = $attempt.attempt_index AND $attempt.attempt_index <= g.max_attempts))
