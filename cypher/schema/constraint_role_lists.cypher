// mode: write
// Migration 6, and the end of every import: the HAS_CONSTRAINT edges an older kernel wrote,
// one per role (keyed by it: {id: role, role: role}), become one edge per goal and
// constraint whose roles are a list in the kernel's order ($roles), as the commits now
// write them; a pair already held that way is left alone.
MATCH (g:Goal)-[h:HAS_CONSTRAINT]->(c:Constraint)
WITH g, c, collect(h) AS edges, collect(coalesce(h.role, h.id)) AS keyed
WHERE size(keyed) > 0
WITH g, c, edges, reduce(held = keyed, e IN edges | held + coalesce(e.roles, [])) AS held
UNWIND edges AS e
DELETE e
WITH DISTINCT g, c, held
CREATE (g)-[:HAS_CONSTRAINT {roles: [k IN $roles WHERE k IN held]}]->(c)
RETURN count(c) AS pairs
