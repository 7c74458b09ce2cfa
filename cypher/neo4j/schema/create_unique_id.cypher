// mode: schema
// template: label
// Uniqueness of `id` for one label (also creates its backing index).
CREATE CONSTRAINT {{label}}_id_unique IF NOT EXISTS
FOR (n:{{label}}) REQUIRE n.id IS UNIQUE
