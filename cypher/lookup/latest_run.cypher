// mode: read
// The newest run: run ids are ULIDs, which sort by their start time.
MATCH (r:Run)
RETURN r.id AS id
ORDER BY r.id DESC
LIMIT 1
