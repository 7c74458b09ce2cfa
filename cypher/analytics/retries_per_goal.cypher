// mode: read
// Retries per goal summary (attempts beyond the first), most retried first: where TRY
// struggles. (Goals with the same summary are grouped; toInteger, since the embedded
// store's sum() of integers is a float.)
MATCH (g:Goal)
WHERE g.attempt_count > 1 AND coalesce(g.stale, false) = false
RETURN g.summary AS goal, count(g) AS goals, toInteger(sum(g.attempt_count - 1)) AS retries,
       max(g.attempt_count) AS most_attempts
ORDER BY retries DESC, goal
