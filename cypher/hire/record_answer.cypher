// mode: write
// A human's answer to an open request, stored for the kernel to apply when the run
// resumes (the kernel records it in the run's ledger then). Only an open request
// takes an answer: no row comes back otherwise.
MATCH (q:CapabilityRequest {id: $id})
WHERE q.status = 'requested'
SET q.status = 'answered', q.answer = $answer, q.caption = 'answered: ' + q.capability_tag
RETURN q.id AS id
