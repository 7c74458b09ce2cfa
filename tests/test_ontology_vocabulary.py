"""Every label and relationship type a statement in cypher/ (any dialect, fragments
included) can create is in the ontology, so whatever a run writes can be exported and
imported. Read from the statements' text, without running them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel.paths import cypher_dir
from kernel.store.ontology import LABEL_NAMES as PRIMARY_LABELS
from kernel.store.ontology import REL_TYPE_NAMES, STATUS_LABELS
from kernel.store.vocabulary import Introduced, introduced, outside

STATEMENTS = sorted(cypher_dir().rglob("*.cypher"))
LABEL_NAMES = PRIMARY_LABELS | STATUS_LABELS


def test_every_name_a_statement_can_create_is_in_the_ontology() -> None:
    assert {p.relative_to(cypher_dir()).parts[0] for p in STATEMENTS} >= \
        {"falkordb", "neo4j", "_fragments"}  # every dialect is read
    assert outside(STATEMENTS, cypher_dir(), LABEL_NAMES, REL_TYPE_NAMES) == []


@pytest.mark.parametrize(("kind", "name", "path"), [
    ("relationship type", "CHOSE", "suggestion/weigh.cypher"),
    ("relationship type", "DERIVED_FROM", "_fragments/store_artifacts.cypher"),
    ("label", "LedgerEntry", "_fragments/store_entries.cypher"),
    ("label", "Actor", "suggestion/weigh.cypher"),
    ("label", "GoalPattern", "falkordb/_fragments/store_pattern.cypher"),
    ("label", "GoalPattern", "neo4j/_fragments/store_pattern.cypher"),
])
def test_a_name_left_out_of_the_ontology_is_named_with_its_statement(
        kind: str, name: str, path: str) -> None:
    labels = LABEL_NAMES - {name} if kind == "label" else LABEL_NAMES
    types = REL_TYPE_NAMES - {name} if kind != "label" else REL_TYPE_NAMES
    assert Introduced(path, kind, name) in outside(STATEMENTS, cypher_dir(), labels, types)


@pytest.mark.parametrize(("text", "labels", "types"), [
    ("CREATE (a:Run {id: $id})-[:ROOT {at: 1}]->(g:Goal:Extra)", {"Run", "Goal", "Extra"},
     {"ROOT"}),
    ("MATCH (a:Seen) CALL {\n  UNWIND $r AS r\n  CREATE (n:Made)\n  SET n = r.props\n}"
     " RETURN 1", {"Made"}, set()),
    ("MATCH (a), (b) FOREACH (_ IN [1] |\n  MERGE (a)-[:LINKS]->(b))", set(), {"LINKS"}),
    ("MATCH (n {id: $id}) SET n:Marked, n.x = {k: v, w: z}, n += {a: b}", {"Marked"}, set()),
    ("MERGE (n:Known {id: $id})\nON CREATE SET n.caption = 'CREATE (x:InAString)'",
     {"Known"}, set()),
    ("// CREATE (x:InAComment)\nMATCH (a:{{from_label}})-[r:{{type}}]->(b:Only) RETURN r",
     set(), set()),
    ("CREATE INDEX FOR (n:Goal) ON (n.status)", set(), set()),
])
def test_the_reader_finds_what_create_merge_and_set_bring(text: str, labels: set[str],
                                                          types: set[str]) -> None:
    assert introduced(text) == (labels, types)


def test_the_listing_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "x.cypher").write_text("MATCH (a:A) MERGE (a)-[:NEW]->(:Fresh)\n")
    assert outside([tmp_path / "x.cypher"], tmp_path, {"A"}, set()) == [
        Introduced("x.cypher", "label", "Fresh"),
        Introduced("x.cypher", "relationship type", "NEW")]
