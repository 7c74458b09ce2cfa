// mode: read
// Every goal of a run with what `kernel tree` shows, and its last attempt's verdict.
MATCH (g:Goal {run_id: $run_id})
OPTIONAL MATCH (last:Attempt {id: g.last_attempt_id})
RETURN g.id AS id, g.parent_id AS parent_id, g.depth AS depth, g.seq AS seq,
       g.summary AS summary, g.status AS status, g.sigma_v AS sigma_v,
       g.sigma_path AS sigma_path, g.cost_allocated AS cost_allocated,
       g.cost_spent AS cost_spent, coalesce(g.subtree_cost_spent, 0) AS subtree_cost_spent,
       g.cost_granted AS cost_granted,
       g.cost_refunded AS cost_refunded, g.time_allocated AS time_allocated,
       g.time_spent AS time_spent, coalesce(g.stale, false) AS stale,
       coalesce(g.attempt_count, 0) AS attempt_count, g.builds_capability AS builds_capability,
       last.verdict AS verdict
ORDER BY g.depth, g.seq, g.id
