// mode: write
// A failed attempt's diagnosed cause: the FailureMode it names (created with its
// description and embedding, or the near-duplicate already known, which $failure_id
// then names), linked FAILED_BECAUSE with the name the diagnosis used. The attempt and
// its FAILED_ON edge take the cause unless a check already diagnosed one. $source is
// 'undiagnosed' for a diagnosis that cited no evidence. Idempotent.
MATCH (run:Run {id: $run_id}), (a:Attempt {id: $attempt_id})
WHERE run.seq = $seq AND a.verdict IS NOT NULL
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    a.diagnosis = $description, a.failure_mode = coalesce(a.failure_mode, $failure_id)
MERGE (f:FailureMode {id: $failure_id})
ON CREATE SET f.name = $name, f.slug = $name, f.caption = $name,
              f.description = $description, f.source = $source,
              f.embedding = $vector
MERGE (a)-[b:FAILED_BECAUSE]->(f)
SET b.source = $source, b.name = $name
WITH a, f
OPTIONAL MATCH (:Resolver)-[e:FAILED_ON {id: a.id}]->(:GoalPattern)
FOREACH (x IN CASE WHEN e IS NULL THEN [] ELSE [e] END |
  SET x.failure_mode = coalesce(x.failure_mode, f.id))
RETURN f.id AS id
