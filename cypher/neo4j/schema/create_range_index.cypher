// mode: schema
// template: label, prop
// Lookup index for the kernel's frequent property filters.
CREATE INDEX {{label}}_{{prop}} IF NOT EXISTS
FOR (n:{{label}}) ON (n.{{prop}})
