// mode: write
// Records how an attempt's candidates were weighed: the model's own output and the
// person's suggestions, each with its verdict, sigma_v, verification, rank and status
// (chosen, outranked, rejected). The attempt's and the goal's output become the chosen
// candidate. A suggestion is PROPOSED_BY its author (an Actor of kind human), the
// model's output by the run's proposer: provenance only. A candidate other than the
// chosen one gets an edge per check, VIOLATED or SATISFIES, with the check that decided
// it and its sigma (the chosen candidate gets its edges when the attempt's verification
// is recorded). A chosen suggestion is CHOSEN by the attempt, which then no longer
// counts as its resolver's: the resolver's record is its own outputs' (its candidate's
// verdict stays on that artifact).
MATCH (run:Run {id: $run_id}), (a:Attempt {id: $attempt_id})-[:FOR]->(g:Goal)
WHERE run.seq = $seq AND a.verdict IS NULL AND a.weighed IS NULL
SET run.seq = $seq + 1, run.proposals = $proposals, run.queue = coalesce($queue, run.queue),
    a.weighed = true, a.chosen = $chosen_kind, a.output_artifact_id = $chosen_id,
    g.output_artifact_id = $chosen_id
WITH a, run
OPTIONAL MATCH (a)-[used:USED]->(:Resolver)
WHERE $chosen_kind = 'suggestion'
DELETE used
WITH DISTINCT a, run
OPTIONAL MATCH (run)-[:PROPOSED_BY]->(proposer:Actor)
WITH a, proposer
UNWIND $candidates AS c
MATCH (art:Artifact {id: c.artifact_id})
SET art.verdict = c.verdict, art.sigma_v = c.sigma_v, art.verification = c.verification,
    art.rank = c.rank, art.status = c.status, art.candidate_for = a.id
FOREACH (x IN CASE WHEN c.author IS NULL AND proposer IS NOT NULL THEN [proposer] ELSE [] END |
  MERGE (art)-[:PROPOSED_BY]->(x))
FOREACH (_ IN CASE WHEN c.author IS NULL THEN [] ELSE [1] END |
  MERGE (who:Actor {id: 'actor:human:' + c.author})
  ON CREATE SET who.name = c.author, who.caption = c.author, who.kind = 'human'
  MERGE (art)-[:PROPOSED_BY]->(who))
FOREACH (_ IN CASE WHEN c.status = 'chosen' AND c.author IS NOT NULL THEN [1] ELSE [] END |
  MERGE (a)-[:CHOSE]->(art))
WITH a, art, c
UNWIND (CASE WHEN c.status = 'chosen' OR size(c.outcomes) = 0 THEN [null]
             ELSE c.outcomes END) AS o
OPTIONAL MATCH (k:Constraint {id: o.constraint_id})
FOREACH (x IN CASE WHEN k IS NULL OR o.passed THEN [] ELSE [k] END |
  MERGE (art)-[v:VIOLATED {attempt_id: a.id}]->(x)
  SET v.check = o.check, v.sigma = o.sigma)
FOREACH (x IN CASE WHEN k IS NULL OR NOT o.passed THEN [] ELSE [k] END |
  MERGE (art)-[s:SATISFIES {attempt_id: a.id}]->(x)
  SET s.check = o.check, s.sigma = o.sigma)
WITH DISTINCT a
RETURN a.id AS id
