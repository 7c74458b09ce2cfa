// mode: write
// Takes a run's lease if it is still held by $expected (null: nobody), in one statement:
// two processes cannot both take it. The run node is written first (who last claimed
// the lease), which locks it, and only then is its holder compared: on Neo4j a
// comparison made before the lock could read the holder another transaction is
// replacing, and both would take the lease.
MATCH (run:Run {id: $run_id})
SET run.lease_claimed_by = $holder
WITH run
WHERE coalesce(run.lease_holder, '') = coalesce($expected, '')
SET run.lease_holder = $holder, run.lease_expires = $expires
FOREACH (removal IN [{stopped: null}] | SET run += removal)
RETURN run.lease_holder AS holder
