// mode: schema
// template: label, prop
// Exact-match index; FalkorDB needs one under every unique constraint.
CREATE INDEX FOR (n:{{label}}) ON (n.{{prop}})
