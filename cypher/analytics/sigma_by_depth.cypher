// mode: read
// The distribution of sigma_v by depth in the goal trees (live, verified goals).
MATCH (g:Goal)
WHERE g.sigma_v IS NOT NULL AND coalesce(g.stale, false) = false
RETURN g.depth AS depth, count(g) AS goals, min(g.sigma_v) AS min_sigma,
       avg(g.sigma_v) AS mean_sigma, max(g.sigma_v) AS max_sigma
ORDER BY depth
