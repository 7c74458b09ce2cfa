// needs: checked
// The guard of a commit that records a verification ($checked, or null) on the goal bound
// as `g`: the attempt it judges is the goal's last one and has no verdict yet. It
// follows the statement's WHERE, before anything is written.
OPTIONAL MATCH (checked:Attempt {id: $checked.attempt_id})-[:FOR]->(g)
WITH *
WHERE $checked IS NULL
   OR (checked IS NOT NULL AND checked.verdict IS NULL AND g.last_attempt_id = checked.id)
