// mode: read
// What became of identical content before: for each sha256, how many verified outputs
// of attempts on other goals, and weighed candidates of other goals, had it, and how
// many of those passed. Content, not authorship, is what history is kept on. An
// attempt's verdict counts for the output it PRODUCED while that is still its output; a
// suggestion the attempt chose instead carries the same verdict itself.
UNWIND $hashes AS sha
OPTIONAL MATCH (o:Artifact {sha256: sha})
WHERE o.goal_id <> $goal_id
OPTIONAL MATCH (a:Attempt)-[:PRODUCED]->(o)
WHERE a.verdict IS NOT NULL AND a.output_artifact_id = o.id
WITH sha, o, collect(a.verdict) AS attempts
WITH sha, CASE WHEN o IS NULL THEN [] WHEN size(attempts) > 0 THEN attempts
               WHEN o.verdict IS NULL THEN [] ELSE [o.verdict] END AS verdicts
UNWIND (CASE WHEN size(verdicts) = 0 THEN [null] ELSE verdicts END) AS verdict
WITH sha, collect(verdict) AS seen
RETURN sha AS sha256, size(seen) AS total, size([v IN seen WHERE v = 'SAT']) AS passed
ORDER BY sha256
