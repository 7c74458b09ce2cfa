// needs: entries
// instead: WITH *
// Stores the ledger entries chained since the run's last commit ($entries), inside the
// commit that carries them: each is RECORDED_IN the run ($run_id) and FOLLOWS the entry
// before it (the first follows the stored head, when there is one).
CALL {
  UNWIND $entries AS entry
  MATCH (r:Run {id: $run_id})
  CREATE (e:LedgerEntry)
  SET e = entry.props
  CREATE (e)-[:RECORDED_IN]->(r)
  WITH collect({e: e, prev: entry.prev_id}) AS made
  OPTIONAL MATCH (head:LedgerEntry {id: made[0].prev})
  UNWIND made AS m
  WITH m.e AS later,
       [x IN made WHERE x.e.id = m.prev | x.e] + [h IN [head] WHERE h IS NOT NULL AND h.id = m.prev] AS earlier
  FOREACH (x IN earlier | CREATE (later)-[:FOLLOWS]->(x))
}
