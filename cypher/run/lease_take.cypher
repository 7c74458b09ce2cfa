// mode: write
// Takes a run's lease if it is still held by $expected (null: nobody), in one statement:
// two processes cannot both take it.
MATCH (run:Run {id: $run_id})
WHERE coalesce(run.lease_holder, '') = coalesce($expected, '')
SET run.lease_holder = $holder, run.lease_expires = $expires
FOREACH (removal IN [{stopped: null}] | SET run += removal)
RETURN run.lease_holder AS holder
