// mode: write
// Migration 3: the boot graph once said codex-tools-0 provides web_search and
// package_install; its sandbox has no network and installs nothing. The claim goes, and
// so does each of those capabilities no other resolver provides.
MATCH (r:Resolver {id: 'resolver:codex-tools-0'})
SET r.capabilities = [t IN coalesce(r.capabilities, []) WHERE NOT t IN $tags]
WITH r
OPTIONAL MATCH (r)-[p:PROVIDES]->(c:Capability)
WHERE c.tag IN $tags
DELETE p
WITH count(*) AS dropped
MATCH (c:Capability)
WHERE c.tag IN $tags
OPTIONAL MATCH (other:Resolver)-[:PROVIDES]->(c)
WITH c, count(other) AS providers
WHERE providers = 0
DETACH DELETE c
RETURN count(*) AS removed
