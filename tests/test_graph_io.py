"""Export / import: deterministic, round-trip equal, merging, validated first, resumable."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel.errors import GraphFileError, StatementError
from kernel.graph_io import export_graph, import_graph, importer
from kernel.paths import seeds_dir
from kernel.schema import BOOT_SEED, init_schema
from kernel.store import GraphStore, open_store
from tests.conftest import embedded_settings


def _export(store: GraphStore) -> str:
    buffer = io.StringIO()
    export_graph(store, buffer, page_size=7)  # small pages exercise keyset paging
    return buffer.getvalue()


def _write(tmp_path: Path, name: str, lines: list[dict | str]) -> Path:
    path = tmp_path / name
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


HEADER = {"kind": "header", "format": "kernel-graph", "version": 1}


def _node(node_label: str, ident: str, **props: object) -> dict:
    return {"kind": "node", "label": node_label, "id": ident, "props": props}


def _rel(rel_type: str, src: tuple[str, str], dst: tuple[str, str], key: str | None = None,
         **props: object) -> dict:
    line = {"kind": "rel", "type": rel_type, "from": {"label": src[0], "id": src[1]},
            "to": {"label": dst[0], "id": dst[1]}, "props": props}
    if key:
        line["key"] = key
    return line


def _footer(nodes: int, rels: int) -> dict:
    return {"kind": "footer", "nodes": nodes, "relationships": rels}


def test_fresh_graph_exports_exactly_the_boot_seed(initialised: GraphStore) -> None:
    exported = _export(initialised).splitlines()
    seed = (seeds_dir() / BOOT_SEED).read_text().splitlines()
    assert exported[1:] == seed[1:]  # the header names the exporting kernel version


def test_round_trip_into_an_empty_graph_is_identical(initialised: GraphStore, tmp_path: Path,
                                                     data_dir: Path) -> None:
    src = initialised
    src.execute_adhoc(
        "MATCH (r:Resolver {id: 'resolver:claude-code-0'}) "
        "CREATE (g:Goal {id: 'node:1', summary: 'say \"hi\" \u00e9', weights: [0.5, 2.0]}) "
        "CREATE (p:GoalPattern {id: 'goal_pattern:1', summary: 's'}) "
        "CREATE (r)-[:SUCCEEDED_ON {id: 'edge:1', sigma_v: 0.9}]->(p) "
        "CREATE (r)-[:SUCCEEDED_ON {id: 'edge:2', sigma_v: 0.8}]->(p) "
        "CREATE (g)-[:INSTANCE_OF]->(p)", {}, write=True)
    src.run("vector/set_goal_pattern_embedding",
            {"id": "goal_pattern:1", "summary": "s", "vector": [0.25] * 384})
    first = _export(src)
    path = tmp_path / "g.jsonl"
    path.write_text(first)
    dst = open_store(embedded_settings(data_dir, "round-trip-target"))
    try:
        init_schema(dst)
        report = import_graph(dst, path, window=5)
        assert report.nodes == first.count('"kind":"node"')
        assert _export(dst) == first
        # The embedding came back as an indexed vector, not as a plain list.
        rows = dst.run("vector/nearest_goal_patterns", {"candidates": 1, "vector": [0.25] * 384})
        assert rows[0]["id"] == "goal_pattern:1"
    finally:
        dst.drop_all()
        dst.close()


def test_import_into_a_non_empty_graph_merges_by_id(initialised: GraphStore,
                                                    tmp_path: Path) -> None:
    path = _write(tmp_path, "m.jsonl", [
        HEADER,
        _node("Resolver", "resolver:claude-code-0", label="Claude (renamed)"),
        _node("Resolver", "resolver:new-1", label="New"),
        _rel("PROVIDES", ("Resolver", "resolver:new-1"), ("Capability", "capability:reason")),
        _rel("PROVIDES", ("Resolver", "resolver:claude-code-0"),
             ("Capability", "capability:reason")),
        _footer(2, 2),
    ])
    for _ in range(2):
        import_graph(initialised, path)
    counts = {r["label"]: r["nodes"] for r in initialised.run("admin/count_by_label")}
    assert counts["Resolver"] == 4
    rels = initialised.execute_adhoc(
        "MATCH (r:Resolver)-[p:PROVIDES]->(:Capability {id: 'capability:reason'}) "
        "RETURN r.id AS id, count(p) AS n ORDER BY id", {}, write=False).records()
    assert rels == [{"id": "resolver:claude-code-0", "n": 1}, {"id": "resolver:new-1", "n": 1}]
    label = initialised.execute_adhoc(
        "MATCH (r:Resolver {id: 'resolver:claude-code-0'}) RETURN r.label AS l, r.type AS t", {},
        write=False).records()
    assert label == [{"l": "Claude (renamed)", "t": "digital"}]  # merged, not replaced


def test_duplicate_relationships_in_one_batch_are_merged_once(initialised: GraphStore,
                                                               tmp_path: Path) -> None:
    rel = _rel("ENABLES", ("Capability", "capability:reason"), ("Capability", "capability:decompose"))
    path = _write(tmp_path, "d.jsonl", [HEADER, rel, rel, rel, _footer(0, 3)])
    import_graph(initialised, path)
    rows = initialised.execute_adhoc("MATCH ()-[e:ENABLES]->() RETURN count(e) AS n", {},
                                     write=False).records()
    assert rows == [{"n": 1}]


@pytest.mark.parametrize(("lines", "line_no", "message"), [
    ([_node("Goal", "node:1")], 1, "first line must be the header"),
    ([HEADER, {"kind": "node", "id": "node:1"}], 2, "node.label: Field required"),
    ([HEADER, "{not json"], 2, "not valid JSON"),
    ([HEADER, _node("Wizard", "w:1")], 2, "not part of the kernel ontology"),
    ([HEADER, _node("Goal", "node:1", nested={"a": 1})], 2, "props.nested"),
    ([HEADER, _node("Goal", "node:1", mixed=[1, "a"])], 2, "one type"),
    ([HEADER, _node("Goal", "node:2"), _node("Goal", "node:1")], 3, "out of order"),
    ([HEADER, _rel("PROVIDES", ("Resolver", "a"), ("Capability", "b")),
      _node("Goal", "node:1")], 3, "before relationship"),
    ([HEADER, _rel("TELEPORTS", ("Goal", "a"), ("Goal", "b"))], 2, "relationship type"),
    ([HEADER, _node("Goal", "node:1", **{"a-b": 1})], 2, "letters, digits"),
    ([HEADER, _node("Goal", "node:1", s="a\x00b")], 2, "NUL"),
    ([HEADER, _node("Goal", "node:1", s="a\ud800b")], 2, "lone surrogate"),
    ([HEADER, '{"kind":"node","label":"Goal","id":"node:1","props":{"x":Infinity}}'], 2, "finite"),
    ([HEADER, _node("Goal", "node:1")], 2, "truncated"),
    ([HEADER, _node("Goal", "node:1"), _footer(2, 0)], 3, "footer says 2 nodes"),
    ([HEADER, _footer(0, 0), _node("Goal", "node:1")], 3, "after the footer"),
])
def test_malformed_files_name_the_line_and_import_nothing(
        initialised: GraphStore, tmp_path: Path, lines: list, line_no: int, message: str) -> None:
    before = initialised.run("admin/count_by_label")
    path = _write(tmp_path, "bad.jsonl", lines)
    with pytest.raises(GraphFileError, match=message) as info:
        import_graph(initialised, path)
    assert info.value.line == line_no
    assert f"bad.jsonl:{line_no}:" in str(info.value)
    assert initialised.run("admin/count_by_label") == before


def test_a_dangling_relationship_is_named_before_anything_is_imported(
        initialised: GraphStore, tmp_path: Path) -> None:
    before = initialised.run("admin/count_by_label")
    nodes = [_node("Goal", f"node:{i:02d}") for i in range(6)]
    good = _rel("DEPENDS_ON", ("Goal", "node:01"), ("Goal", "node:00"))
    dangling = _rel("DEPENDS_ON", ("Goal", "node:02"), ("Goal", "node:99"))
    path = _write(tmp_path, "dangling.jsonl", [HEADER, *nodes, good, dangling, _footer(6, 2)])
    with pytest.raises(GraphFileError, match=r"node:99.*nothing was imported") as info:
        import_graph(initialised, path, window=3)
    assert info.value.line == 9
    assert initialised.run("admin/count_by_label") == before
    assert initialised.run("graph_io/get_checkpoint", {"id": _import_id(path)}) == []

    # An endpoint already in the graph is enough.
    initialised.execute_adhoc("CREATE (:Goal {id: 'node:99'})", {}, write=True)
    import_graph(initialised, path, window=3)
    deps = initialised.execute_adhoc("MATCH ()-[d:DEPENDS_ON]->() RETURN count(d) AS n", {},
                                     write=False).records()
    assert deps == [{"n": 2}]


def test_an_interrupted_import_resumes_after_its_checkpoint(
        initialised: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nodes = [_node("Goal", f"node:{i:02d}") for i in range(6)]
    deps = [_rel("DEPENDS_ON", ("Goal", f"node:{i:02d}"), ("Goal", "node:00"))
            for i in (1, 2)]
    path = _write(tmp_path, "cut.jsonl", [HEADER, *nodes, *deps, _footer(6, 2)])
    real, calls = importer._write_window, []

    def dies_on_the_third_window(*args: Any) -> None:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        real(*args)

    monkeypatch.setattr(importer, "_write_window", dies_on_the_third_window)
    with pytest.raises(KeyboardInterrupt):
        import_graph(initialised, path, window=3)
    checkpoint = initialised.run("graph_io/get_checkpoint", {"id": _import_id(path)})
    assert checkpoint[0]["line"] == 7 and checkpoint[0]["done"] is False

    monkeypatch.setattr(importer, "_write_window", real)
    report = import_graph(initialised, path, window=3)
    assert report.resumed_from_line == 7
    count = initialised.execute_adhoc("MATCH ()-[d:DEPENDS_ON]->() RETURN count(d) AS n", {},
                                      write=False).records()
    assert count == [{"n": 2}]


def test_keyed_and_unkeyed_relationships_between_the_same_nodes_stay_apart(
        initialised: GraphStore, tmp_path: Path) -> None:
    a, b = ("Goal", "node:a"), ("Goal", "node:b")
    path = _write(tmp_path, "k.jsonl", [
        HEADER, _node("Goal", "node:a"), _node("Goal", "node:b"),
        _rel("DEPENDS_ON", a, b, w=1), _rel("DEPENDS_ON", a, b, key="e1", w=2),
        _rel("DEPENDS_ON", a, b, key="e2", w=3), _footer(2, 3)])
    for _ in range(2):
        import_graph(initialised, path)
    rows = initialised.execute_adhoc(
        "MATCH ()-[r:DEPENDS_ON]->() RETURN r.id AS id, r.w AS w ORDER BY w", {},
        write=False).records()
    assert rows == [{"id": None, "w": 1}, {"id": "e1", "w": 2}, {"id": "e2", "w": 3}]


def test_embedded_doubles_come_back_with_15_significant_digits(embedded_store: GraphStore) -> None:
    """Documented backend fact: stored exactly, answered rounded; rounding is stable."""
    rows = embedded_store.execute_adhoc("RETURN $x AS x, $x = 0.1 + 0.2 AS exact",
                                        {"x": 0.1 + 0.2}, write=False).records()
    assert rows == [{"x": 0.3, "exact": True}]


def test_unstorable_text_in_a_parameter_is_refused_clearly(embedded_store: GraphStore) -> None:
    with pytest.raises(StatementError, match="NUL"):
        embedded_store.run("bench/merge_node", {"id": "bench:x", "caption": "a\x00b"})
    with pytest.raises(StatementError, match="lone surrogate"):
        embedded_store.run("bench/merge_nodes", {"rows": [{"id": "bench:y", "caption": "\ud800"}]})


def _import_id(path: Path) -> str:
    import hashlib

    return "import:" + hashlib.sha256(path.read_bytes()).hexdigest()


_ids = st.text(alphabet="abcdefghij0123456789:-_", min_size=1, max_size=8)
# The embedded server answers doubles with 15 significant digits (a documented
# FalkorDB fact); values already at that precision round-trip exactly.
_floats = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False).map(
    lambda x: float(f"{x:.15g}"))
_scalars = st.one_of(
    st.booleans(), st.integers(-2**53, 2**53), _floats,
    st.text(alphabet=st.characters(blacklist_characters="\x00",
                                   blacklist_categories=("Cs",)), max_size=20),
)
_props = st.dictionaries(st.sampled_from(["a", "b", "caption", "summary", "weights"]),
                         st.one_of(_scalars, st.lists(st.integers(-100, 100), max_size=4)),
                         max_size=4)


@pytest.mark.slow
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(goals=st.dictionaries(_ids, _props, min_size=1, max_size=12),
       edges=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11),
                                st.sampled_from(["DEPENDS_ON", "CHILD_OF"]),
                                st.one_of(st.none(), _ids)), max_size=20))
def test_any_graph_survives_export_import_export(embedded_store: GraphStore, tmp_path: Path,
                                                  data_dir: Path, goals: dict, edges: list) -> None:
    store = embedded_store
    store.drop_all()
    ids = sorted(goals)
    lines: list[dict] = [HEADER]
    lines += [_node("Goal", f"node:{gid}", **props) for gid, props in sorted(goals.items())]
    rels = [_rel(t, ("Goal", f"node:{ids[a % len(ids)]}"), ("Goal", f"node:{ids[b % len(ids)]}"),
                 key) for a, b, t, key in edges]
    path = _write(tmp_path, "random.jsonl", [*lines, *rels, _footer(len(goals), len(rels))])
    import_graph(store, path)
    first = _export(store)
    copy_path = tmp_path / "copy.jsonl"
    copy_path.write_text(first)
    store.drop_all()
    import_graph(store, copy_path)
    assert _export(store) == first


@pytest.mark.neo4j
def test_embedded_to_neo4j_and_back_gives_the_same_graph(
        embedded_store: GraphStore, neo4j_store: GraphStore, tmp_path: Path,
        data_dir: Path) -> None:
    initialised = embedded_store
    init_schema(initialised)
    initialised.run("vector/set_goal_pattern_embedding",
                    {"id": "goal_pattern:x", "summary": "x", "vector": [0.5] * 384})
    from_embedded = _export(initialised)
    path = tmp_path / "a.jsonl"
    path.write_text(from_embedded)
    init_schema(neo4j_store)
    import_graph(neo4j_store, path)
    from_neo4j = _export(neo4j_store)
    assert from_neo4j == from_embedded
    back = open_store(embedded_settings(data_dir, "back-from-neo4j"))
    try:
        init_schema(back)
        path.write_text(from_neo4j)
        import_graph(back, path)
        assert _export(back) == from_embedded
    finally:
        back.drop_all()
        back.close()


@pytest.mark.slow  # builds, exports and imports 12,000 and 40,000 elements
def test_export_and_import_memory_does_not_grow_with_the_graph(
        initialised_graph: GraphStore) -> None:
    """Peak heap, as `kernel bench store` measures it, at over three times the elements
    (both past export's page of 5,000 nodes): export holds one page at a time, import
    checks relationship endpoints against an on-disk index instead of a set."""
    from kernel.bench.store import bench_graph_io

    figures = bench_graph_io(initialised_graph, (12_000, 40_000), timed=False)
    small, large = ({f.name.split(" peak")[0]: f.value for f in half}
                    for half in (figures[:2], figures[2:]))
    assert set(small) == set(large) == {"export", "import"}
    elements = [int(f.name.split("(")[1].split()[0]) for f in figures[::2]]
    assert 12_000 <= elements[0] < 13_000 and 40_000 <= elements[1] < 41_000, elements
    for kind in small:
        assert large[kind] < 1.2 * small[kind], (kind, small, large)


def test_a_file_changed_after_its_check_stops_the_import_at_the_changed_block(
        initialised: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pass 2 decodes without checking again only the bytes pass 1 checked."""
    nodes = [_node("Goal", f"node:{i:04d}") for i in range(1500)]
    path = _write(tmp_path, "moving.jsonl", [HEADER, *nodes, _footer(1500, 0)])
    real = importer.validate_file

    def checked_then_altered(*args: Any, **kwargs: Any) -> Any:
        summary = real(*args, **kwargs)
        text = path.read_text().replace('"node:1200"', '"node:1200a"')
        path.write_text(text)
        return summary

    monkeypatch.setattr(importer, "validate_file", checked_then_altered)
    with pytest.raises(GraphFileError, match="changed after it was checked") as info:
        import_graph(initialised, path, window=100)
    assert info.value.line == 1001  # the block holding line 1202

    def goals() -> list[dict[str, Any]]:
        return initialised.execute_adhoc("MATCH (g:Goal) WHERE g.id STARTS WITH 'node:' "
                                         "RETURN count(g) AS n, max(g.id) AS last", {},
                                         write=False).records()

    assert goals() == [{"n": 900, "last": "node:0899"}]  # the windows ending in block 1

    monkeypatch.setattr(importer, "validate_file", real)
    assert import_graph(initialised, path, window=100).nodes == 1500  # checked again
    assert goals() == [{"n": 1500, "last": "node:1499"}]


def test_an_endpoint_deleted_after_the_check_is_named_by_its_line(
        initialised: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    initialised.execute_adhoc("CREATE (:Goal {id: 'outside:1'})", {}, write=True)
    nodes = [_node("Goal", f"node:{i:02d}") for i in range(3)]
    rels = [_rel("DEPENDS_ON", ("Goal", "node:00"), ("Goal", "node:01")),
            _rel("DEPENDS_ON", ("Goal", "node:02"), ("Goal", "outside:1"))]
    path = _write(tmp_path, "gone.jsonl", [HEADER, *nodes, *rels, _footer(3, 2)])
    real = importer.validate_file

    def checked_then_deleted(*args: Any, **kwargs: Any) -> Any:
        summary = real(*args, **kwargs)
        initialised.execute_adhoc("MATCH (g:Goal {id: 'outside:1'}) DETACH DELETE g", {},
                                  write=True)
        return summary

    monkeypatch.setattr(importer, "validate_file", checked_then_deleted)
    with pytest.raises(GraphFileError, match=r"outside:1.*neither in the file nor in the "
                                             r"graph; earlier lines are imported") as info:
        import_graph(initialised, path)
    assert info.value.line == 6


_any_props = st.dictionaries(
    st.text(alphabet="ab_1\n`", min_size=1, max_size=3),
    st.one_of(_scalars, st.none(), st.floats(), st.text(max_size=3),
              st.lists(st.one_of(st.integers(), st.floats(), st.text(max_size=2)), max_size=3),
              st.dictionaries(st.just("k"), st.integers(), max_size=1)),
    max_size=3)


def _same(fast: Any, model: Any) -> None:
    try:
        expected = model()
    except ValueError:  # pydantic's ValidationError is a ValueError
        with pytest.raises(ValueError):
            fast()
        return
    assert fast() == expected


@settings(max_examples=300, deadline=None)
@given(label=st.sampled_from(["Goal", "Artifact", "Nonsense"]), ident=_ids | st.just(""),
       props=_any_props)
def test_export_lines_are_the_models_lines(label: str, ident: str, props: dict) -> None:
    """The exporter writes lines without building models: same text, same refusals."""
    from kernel.graph_io.format import Endpoint, NodeLine, RelLine, dump_line, node_text, rel_text

    _same(lambda: node_text(label, ident, props),
          lambda: dump_line(NodeLine(kind="node", label=label, id=ident, props=props)))
    for key in (None, ident):
        _same(lambda key=key: rel_text("DEPENDS_ON", (label, ident), ("Goal", "g"), key, props),
              lambda key=key: dump_line(RelLine(
                  kind="rel", type="DEPENDS_ON", from_=Endpoint(label=label, id=ident),
                  to=Endpoint(label="Goal", id="g"), key=key, props=props)))
    _same(lambda: rel_text("NOT_A_TYPE", ("Goal", "a"), ("Goal", "g"), None, props),
          lambda: dump_line(RelLine(kind="rel", type="NOT_A_TYPE", from_=Endpoint(
              label="Goal", id="a"), to=Endpoint(label="Goal", id="g"), props=props)))
