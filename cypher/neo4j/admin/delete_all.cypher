// mode: write
// Empties the database (tests and `kernel db reset`); the schema stays.
MATCH (n)
DETACH DELETE n
