// mode: write
// Usage statistics after an outcome: counts and the running average cost.
MATCH (r:Resolver {id: $id})
WITH r, coalesce(r.usage_count, 0) AS n, coalesce(r.avg_cost, 0.0) AS average
SET r.usage_count = n + 1,
    r.success_count = coalesce(r.success_count, 0) + CASE WHEN $success THEN 1 ELSE 0 END,
    r.failure_count = coalesce(r.failure_count, 0) + CASE WHEN $success THEN 0 ELSE 1 END,
    r.avg_cost = (average * n + $cost) / (n + 1)
RETURN r.usage_count AS usage_count
