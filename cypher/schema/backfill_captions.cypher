// mode: write
// Migration 2: every node gets the `caption` the Browser style shows (labels that had
// none take their title, slug, summary or name), and resolvers keep one cost field.
MATCH (n)
WHERE n.caption IS NULL
SET n.caption = left(coalesce(n.title, n.slug, n.summary, n.name, n.tag, n.label, n.id), 80)
WITH count(n) AS captioned
OPTIONAL MATCH (r:Resolver)
WHERE r.avg_cost IS NOT NULL
SET r.avg_cost_micros = coalesce(r.avg_cost_micros, r.avg_cost * 1000000.0)
FOREACH (removal IN [{avg_cost: null}] | SET r += removal)
RETURN captioned, count(r) AS resolvers
