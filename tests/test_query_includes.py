"""``// include: NAME`` in a statement file: a shared clause is written once, in
``cypher/_fragments/``, and every statement that includes it runs the expanded text."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernel.paths import cypher_dir
from kernel.store.queries import FRAGMENTS, QueryCatalog, QueryFileError


def _catalog(root: Path, files: dict[str, str]) -> QueryCatalog:
    for name, text in files.items():
        path = root / f"{name}.cypher"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return QueryCatalog(root, "falkordb").check()


def test_an_include_line_is_replaced_by_the_fragment_without_its_comments(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path, {
        f"{FRAGMENTS}/set_x": "// Sets x.\nSET n.x = $x\n",
        "w": "// mode: write\nMATCH (n {id: $id})\n// include: set_x\nRETURN n.x AS x\n",
    })
    query = catalog.get("w")
    assert query.text == "// mode: write\nMATCH (n {id: $id})\nSET n.x = $x\nRETURN n.x AS x\n"
    assert query.parameters == {"id", "x"}  # the fragment's parameters are the statement's
    assert catalog.names() == ["w"]  # a fragment is not itself a statement


def test_a_dialects_fragment_overrides_the_shared_one_in_shared_statements(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path, {
        f"{FRAGMENTS}/set_x": "SET n.x = $x\n",
        f"falkordb/{FRAGMENTS}/set_x": "SET n.x = vecf32($x)\n",
        "w": "// mode: write\nMATCH (n {id: $id})\n// include: set_x\nRETURN n.x AS x\n",
    })
    assert "SET n.x = vecf32($x)" in catalog.get("w").text
    assert "vecf32" not in QueryCatalog(tmp_path, "neo4j").get("w").text
    assert catalog.names() == ["w"]


@pytest.mark.parametrize("files, message", [
    ({"w": "// mode: write\n// include: missing\nRETURN 1\n"}, "names no fragment"),
    ({"w": "// mode: write\n// include: ../w\nRETURN 1\n"}, "names no fragment"),
    ({f"{FRAGMENTS}/a": "// include: b\nRETURN 2\n", f"{FRAGMENTS}/b": "RETURN 1\n",
      "w": "// mode: write\n// include: a\nRETURN 1\n"}, None),
    ({f"{FRAGMENTS}/a": "MATCH (n)\n// include: b\n", f"{FRAGMENTS}/b": "RETURN 1\n",
      "w": "// mode: write\n// include: a\nRETURN 1\n"}, "cannot include another"),
])
def test_a_bad_include_is_refused_when_the_catalogue_loads(
        tmp_path: Path, files: dict[str, str], message: str | None) -> None:
    if message is None:  # an include in the fragment's own leading comments is only a comment
        assert _catalog(tmp_path, files).get("w").text == "// mode: write\nRETURN 2\nRETURN 1\n"
        return
    with pytest.raises(QueryFileError, match=message):
        _catalog(tmp_path, files)


def test_the_shipped_commits_share_one_copy_of_the_ledger_and_log_clauses() -> None:
    catalog = QueryCatalog(cypher_dir(), "falkordb")
    users = {name: [q.name for q in catalog if f"// include: {name}" in q.path.read_text()]
             for name in ("store_logs", "store_entries", "ledger_tip")}
    assert "budget/spend" in users["store_entries"] and "log/write_many" in users["store_logs"]
    for name, queries in users.items():
        fragment = (cypher_dir() / FRAGMENTS / f"{name}.cypher").read_text().splitlines()[-1]
        for query in queries:
            assert fragment in catalog.get(query).text
    for query in catalog:  # no statement carries its own copy any more
        raw = query.path.read_text()
        assert "UNWIND $logs" not in raw and "UNWIND $entries" not in raw, query.name


def test_a_fragment_whose_parameter_is_empty_is_left_out_of_what_is_sent(
        tmp_path: Path) -> None:
    """Every clause costs the server time even when it does nothing: a commit without
    a spend is sent without the spend's clauses, with the fragment's stand-in line."""
    catalog = _catalog(tmp_path, {
        f"{FRAGMENTS}/pay": "// needs: spend\n// instead: WITH *, false AS paid\n"
                            "// Pays.\nWITH *\nCALL { UNWIND $spend AS s SET n.spent = s }\n"
                            "WITH *, true AS paid\n",
        "w": "// mode: write\nMATCH (n {id: $id})\n// include: pay\nRETURN paid\n",
    })
    query = catalog.get("w")
    assert "UNWIND $spend" in query.text and query.parameters == {"id", "spend"}
    none, empty, some = (query.render(None, {"id": "a", "spend": value})
                         for value in (None, [], [3]))
    assert none == empty == "MATCH (n {id: $id})\nWITH *, false AS paid\nRETURN paid"
    assert some == ("MATCH (n {id: $id})\nWITH *\nCALL { UNWIND $spend AS s SET n.spent = s }"
                    "\nWITH *, true AS paid\nRETURN paid")
    assert query.render(None) == some  # without parameters: everything


def test_a_fragment_needing_a_parameter_it_never_uses_is_refused(tmp_path: Path) -> None:
    with pytest.raises(QueryFileError, match="never uses"):
        _catalog(tmp_path, {
            f"{FRAGMENTS}/pay": "// needs: spend\nSET n.x = 1\n",
            "w": "// mode: write\nMATCH (n)\n// include: pay\nRETURN 1\n",
        })


@pytest.mark.parametrize("dialect", ["falkordb", "neo4j"])
def test_the_shipped_catalogue_checks_whole(dialect: str) -> None:
    """A store reads a statement file when it first runs the statement; the whole
    catalogue, checked at once, still holds together."""
    catalog = QueryCatalog(cypher_dir(), dialect)
    assert catalog._queries == {}
    assert len(list(catalog.check())) == len(catalog.names()) > 100
