"""Every Neo4j-bound statement passes Neo4j's own Cypher front end.

The linter is ``@neo4j-cypher/language-support`` (``lintCypherQuery``) run by
node against the Neo4j 5 function/procedure catalogue the package ships, so a
function or procedure Neo4j lacks is an error. Undeclared parameters are the
only errors ignored: the catalogue knows nothing of ours.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kernel.errors import StatementError
from kernel.paths import cypher_dir
from kernel.store.base import GraphStore
from kernel.store.ontology import EXPORTED_LABELS, LABELS
from kernel.store.queries import _SLOT_VOCABULARY, NamedQuery, QueryCatalog, neo4j_bound

pytestmark = pytest.mark.slow  # Neo4j's linter runs in Node for every statement

LINT_DIR = Path(__file__).parent / "cypher_lint"


def _lint(statements: list[tuple[str, str]]) -> dict[str, list[dict]]:
    node = shutil.which("node")
    if node is None or not (LINT_DIR / "node_modules").is_dir():
        pytest.fail("the Cypher linter is not installed: run 'make test' (it runs "
                    "'npm ci --prefix tests/cypher_lint'), or install Node.js 18+")
    payload = json.dumps([{"name": n, "text": t} for n, t in statements])
    done = subprocess.run([node, str(LINT_DIR / "lint.mjs")], input=payload, capture_output=True,
                          text=True, cwd=LINT_DIR, timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    return {r["name"]: r["diagnostics"] for r in json.loads(done.stdout)}


def _renderings(query: NamedQuery) -> list[tuple[str, str]]:
    """One rendering for label templates (a label is only a name there: every label is
    checked to be a plain identifier below), representative names for the rest;
    a statement with fragments left out when their parameter is empty: with all of
    them and without any (each one left out alone is compiled by Neo4j, below)."""
    if query.optional:
        return [_without(query, []), _without(query, _fragment_names(query))]
    if not query.slots:
        return [(query.name, query.text)]
    ids = {slot: sorted(_SLOT_VOCABULARY[slot])[0] for slot in query.slots}
    if "prop" in ids and query.name.endswith("vector"):
        ids["prop"] = "embedding"
    return [(f"{query.name}[{ids.get('label')}]", query.render(ids))]


def _fragment_names(query: NamedQuery) -> list[str]:
    """The parameters whose emptiness leaves one of the statement's fragments out."""
    return sorted({name for name, _, _ in query.optional})


def _without(query: NamedQuery, left_out: list[str]) -> tuple[str, str]:
    """The statement with the fragments of ``left_out`` replaced by their stand-ins."""
    given = {n: None if n in left_out else ["x"] for n in _fragment_names(query)}
    return (f"{query.name}[without {','.join(left_out) or 'nothing'}]",
            query.render(None, {**dict.fromkeys(query.parameters, 1), **given}))


def _balanced(items: list[tuple[str, str]], parts: int) -> list[list[tuple[str, str]]]:
    """``items`` (name, text) in ``parts`` parts of about equal cost, longest first into the
    cheapest part so far: Neo4j's front end (the linter's and the server's) takes time
    roughly in proportion to a statement's length, and a few commit statements are ten
    times longer than most. Dealt out by count, one part got most of them. A text met
    twice is read once: the same text compiles the same. Each part is read shortest
    first: the linter's code is compiled hot on the short ones before the long ones."""
    items = list({text: (name, text) for name, text in reversed(items)}.values())
    shares: list[list[tuple[str, str]]] = [[] for _ in range(parts)]
    costs = [0] * parts
    for item in sorted(items, key=lambda item: (-len(item[1]), item[0])):
        cheapest = costs.index(min(costs))
        shares[cheapest].append(item)
        costs[cheapest] += len(item[1]) + 500  # a short statement still costs something
    return [sorted(share, key=lambda item: (len(item[1]), item[0])) for share in shares]


def _single_omissions() -> list[tuple[str, str]]:
    return [_without(query, [name]) for query in neo4j_bound(cypher_dir())
            for name in _fragment_names(query)]


EXPLAIN_PARTS = 3  # Neo4j compiles each part on its worker's own server (xdist spreads them)


@pytest.mark.neo4j
@pytest.mark.parametrize("part", range(EXPLAIN_PARTS))
def test_a_statement_without_any_one_of_its_fragments_compiles_on_neo4j(
        neo4j_store: GraphStore, part: int) -> None:
    """Each stand-in line in the context of every other fragment: Neo4j itself compiles
    the statement with one fragment left out at a time (EXPLAIN plans it, runs nothing).
    The linter above reads the statement with all of them and with none; the server
    does the single omissions in a fraction of the linter's time."""
    omissions = _single_omissions()
    shares = _balanced(omissions, EXPLAIN_PARTS)
    assert {t for share in shares for _, t in share} == {t for _, t in omissions}  # all of them
    failures = {}
    for label, text in shares[part]:
        try:  # no parameter values: their types are unknown, as when planned first
            neo4j_store.execute_adhoc(f"EXPLAIN {text}", {}, write=True)
        except StatementError as exc:
            failures[label] = str(exc)
    assert failures == {}
    with pytest.raises(StatementError):  # the check can fail
        neo4j_store.execute_adhoc("EXPLAIN MATCH (n) RETURN vecf32(n.x)", {}, write=True)


def test_every_label_a_template_takes_is_a_plain_identifier() -> None:
    """What linting each label's rendering used to show, without Node: a label is
    spliced into a template as a bare name, so it must be one Cypher reads as such."""
    names = {n for slot in ("label", "from_label", "to_label", "type")
             for n in _SLOT_VOCABULARY[slot]}
    assert {s.name for s in LABELS} <= names
    assert sorted(n for n in names if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", n)) == []


def _errors(diagnostics: list[dict]) -> list[str]:
    return [d["message"] for d in diagnostics
            if d["severity"] == "error" and not d["message"].startswith("Parameter $")]


CHUNKS = 4  # the statements in four parts of about equal cost, each linted by its own Node
# process (xdist spreads them)


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_neo4j_statement_passes_neo4js_linter(chunk: int) -> None:
    statements = [r for q in neo4j_bound(cypher_dir()) for r in _renderings(q)]
    assert len(statements) > len(EXPORTED_LABELS)
    chunks = _balanced(statements, CHUNKS)
    assert {t for chunk_ in chunks for _, t in chunk_} == {t for _, t in statements}  # all of them
    results = _lint(chunks[chunk])
    failures = {name: _errors(diags) for name, diags in results.items() if _errors(diags)}
    assert failures == {}


def test_the_linter_rejects_what_neo4j_lacks() -> None:
    """The check can fail: FalkorDB's own dialect is refused by Neo4j's front end."""
    vector = QueryCatalog(cypher_dir(), "falkordb").get("vector/nearest_goal_patterns")
    results = _lint([("falkordb-vector", vector.text),
                     ("broken", "MATCH (n) RETURN n ORDER"),
                     ("no-exists", "RETURN vecf32([1.0, 2.0]) AS v")])
    assert any("db.idx.vector.queryNodes" in m for m in _errors(results["falkordb-vector"]))
    assert _errors(results["broken"])
    assert any("vecf32" in m for m in _errors(results["no-exists"]))


def test_the_browser_guides_starter_queries_pass_the_linter() -> None:
    guide = (Path(__file__).parents[1] / "docs" / "neo4j-browser.md").read_text()
    blocks = re.findall(r"```cypher\n(.*?)```", guide, re.S)
    assert len(blocks) == 11
    results = _lint([(f"guide-{i}", text) for i, text in enumerate(blocks)])
    bad = {name: _errors(d) for name, d in results.items() if _errors(d)}
    assert not bad, bad
