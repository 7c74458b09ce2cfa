// mode: write
// Removes the goals the export/import benchmark wrote (those of its bench run).
MATCH (g:Goal {run_id: $run_id})
DETACH DELETE g
RETURN count(*) AS removed
