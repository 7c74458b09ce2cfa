// mode: read
// Existing constraints and whether each is already enforced (OPERATIONAL).
CALL db.constraints() YIELD type, label, properties, entitytype, status
RETURN type, label, properties, entitytype, status
