// mode: read
// A run's log entries up to a tier, in commit order.
MATCH (l:LogEntry {run_id: $run_id})
WHERE l.tier <= $max_tier
RETURN l.id AS id, l.tier AS tier, l.goal_id AS goal_id, l.category AS category,
       l.summary AS summary, l.detail AS detail, l.seq AS seq, l.wall_time AS wall_time
ORDER BY l.seq, l.n
