// mode: read
// Failure modes by diagnosed cause, most frequent first: how many failed attempts each
// explains, on how many goals and runs, and which constraints those attempts VIOLATED.
// Filters (null for all): $run_id, runs started from $since until before $until (ISO
// dates or times), $proposer ('scripted' or 'anthropic'). In Neo4j Browser, first
// :param {run_id: null, since: null, until: null, proposer: null}
MATCH (a:Attempt)-[:FAILED_BECAUSE]->(f:FailureMode)
MATCH (a)-[:FOR]->(g:Goal)
MATCH (run:Run {id: g.run_id})
WHERE ($run_id IS NULL OR run.id = $run_id)
  AND ($since IS NULL OR run.started_at >= $since)
  AND ($until IS NULL OR run.started_at < $until)
  AND ($proposer IS NULL OR run.proposer = $proposer)
OPTIONAL MATCH (a)-[:VIOLATED]->(c:Constraint)
WITH f, count(DISTINCT a) AS attempts, count(DISTINCT g) AS goals,
     count(DISTINCT run) AS runs, collect(DISTINCT c.title) AS violated
RETURN f.name AS cause, f.description AS description, attempts, goals, runs, violated
ORDER BY attempts DESC, cause
