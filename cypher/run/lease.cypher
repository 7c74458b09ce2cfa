// mode: read
// Who holds a run's lease, until when (epoch ms), and why it last stopped.
MATCH (run:Run {id: $run_id})
RETURN run.lease_holder AS holder, run.lease_expires AS expires, run.stopped AS stopped
