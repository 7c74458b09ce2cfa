// mode: read
// template: label
// Which of these ids exist as nodes of the label (import checks endpoints first).
MATCH (n:{{label}})
WHERE n.id IN $ids
RETURN n.id AS id
