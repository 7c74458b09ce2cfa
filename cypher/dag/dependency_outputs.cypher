// mode: read
// The goals a goal depends on, in creation order, with what each one ships (what the
// dependent goal is shown as its inputs): a dependency that was decomposed ships the
// outputs of the live leaves below it, in creation order, never the output it had
// before it was split; a dependency that is a leaf ships its own output.
MATCH (g:Goal {id: $goal_id})-[:DEPENDS_ON]->(d:Goal)
MATCH (l:Goal)-[:CHILD_OF*0..]->(d)
WHERE coalesce(l.stale, false) = false AND coalesce(l.purpose, 'solve') <> 'build'
OPTIONAL MATCH (c:Goal)-[:CHILD_OF]->(l)
WHERE coalesce(c.stale, false) = false AND coalesce(c.purpose, 'solve') <> 'build'
WITH d, l, count(c) AS children
WHERE children = 0
RETURN d.id AS id, d.summary AS summary, l.id AS part_id, l.summary AS part_summary,
       l.output_artifact_id AS artifact_id
ORDER BY d.seq, id, l.seq, part_id
