"""Whatever a person types and whatever a proposal names, the CLI answers with exit 0, 1,
2 or 3, never 4 (an internal error): generated ``--param`` values, constraint texts and
file names in a resolve output go through ``kernel`` itself (``kernel.cli.app.main``,
the entry point the shell runs), on both stores."""

from __future__ import annotations

import json
import string
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel.cli.app import main
from kernel.store import GraphStore
from tests.conftest import store_env
from tests.sandbox_support import needs_sandbox

INTERNAL_ERROR = 4
EXAMPLES = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def kernel(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], *args: str) -> int:
    """Run ``kernel ARGS`` as the shell does; the exit code."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(sys, "argv", ["kernel", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30)
    | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)
param_texts = st.one_of(
    json_values.map(lambda v: yaml.safe_dump(v, default_flow_style=True).strip()),
    st.text(max_size=40), st.sampled_from(["[" * 60_000 + "]" * 60_000, "1e999", "-1e999",
                                           "NaN", "10**29", '{"`": 1}', '{"": 2}']))


@pytest.mark.slow
@EXAMPLES
@given(value=param_texts)
def test_no_param_value_is_an_internal_error(initialised: GraphStore, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             value: str) -> None:
    env = store_env(initialised, tmp_path)
    code = kernel(monkeypatch, env, "query", "RETURN $x AS x", "-p", f"x={value}", "--json")
    assert code in (0, 1, 2), (value[:200], code)


words = st.text(alphabet=string.ascii_letters + string.digits + "_ <>=!+-*/.()%`'\"", max_size=30)
constraint_texts = st.one_of(
    st.builds(lambda kind, text: f"logic:cost:{text}" if kind else f"semantic:style:{text}",
              st.booleans(), words),
    st.builds(lambda a, op, b: f"logic:cost:{a} {op} {b}",
              st.sampled_from(["cost_usd", "__import__", "1e999", "10" * 3000, "x.y", "-"]),
              st.sampled_from(["<=", "<", "and", "==", "+", "**"]),
              st.sampled_from(["5", "1e999", "__import__", "()", "not 1", "[1]", "'a'"])),
    st.text(max_size=60))

STOPPED = {"version": 1, "proposals": [
    {"operation": "identify_constraints", "goal": "*", "output": {"constraints": []}},
    {"operation": "select_constraints", "goal": "*",
     "output": {"rationale": "all", "constraint_ids": []}}]}


@pytest.mark.slow
@EXAMPLES
@given(text=constraint_texts)
def test_no_constraint_text_is_an_internal_error(initialised: GraphStore, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 text: str) -> None:
    """The run stops at the first resolve (the script has none): exit 1 at most."""
    script = tmp_path / "stop.yaml"
    script.write_text(yaml.safe_dump(STOPPED))
    env = store_env(initialised, tmp_path)
    code = kernel(monkeypatch, env, "solve", "Write value returning two", "-c", text,
                  "--proposer", "scripted", "--script", str(script), "--budget", "1",
                  "--time", "60")
    assert code in (1, 2), (text[:200], code)


path_parts = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="/"),
                     min_size=0, max_size=12)
file_names = st.one_of(
    st.lists(path_parts, min_size=1, max_size=4).map("/".join),
    st.sampled_from(["a\x00b.py", "x" * 300 + ".py", "../up.py", "/abs.py", "a//b.py",
                     "./a.py", "d", "a\\b.py", "c:/x.py", "/".join(["d"] * 30) + "/f.py"]))


def value_script(files: dict[str, str]) -> dict[str, object]:
    """Scripted proposals for "value() returns two" whose output carries ``files``."""
    return {"version": 1, "proposals": [
        {"operation": "identify_constraints", "goal": "*", "output": {"constraints": [
            {"type": "logic", "domain": "software", "title": "value is two", "explicit": True,
             "payload": {"check": "test", "tests": ["test_value"]}}]}},
        {"operation": "select_constraints", "goal": "*",
         "output": {"rationale": "r", "constraint_ids": ["value is two"]}},
        {"operation": "resolve", "goal": "*", "repeat": True, "output": {
            "artifact_type": "code", "format": "python",
            "content": "def value():\n    return 2\n", "files": files,
            "tests": {"test_main.py": "from main import value\n\n\ndef test_value():\n"
                                      "    assert value() == 2\n"}}}],
        "fallback": {"classify_leaf": {"output": {"is_leaf": True, "leaf_kind": "atomic",
                                                  "leaf_reason": "one function"}}}}


@pytest.mark.slow
@needs_sandbox
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(file_names, min_size=1, max_size=3, unique=True))
def test_no_file_name_in_a_proposal_is_an_internal_error(initialised: GraphStore,
                                                         tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         names: list[str]) -> None:
    """A bad name fails the attempt with the reason (the run ends, exit 1, without a
    gap proposal); good names resolve; ``kernel resume`` never meets an internal error."""
    script = tmp_path / "names.yaml"
    script.write_text(yaml.safe_dump(value_script({name: "x = 1\n" for name in names})))
    env = store_env(initialised, tmp_path)
    code = kernel(monkeypatch, env, "solve", "Write value returning two", "--proposer",
                  "scripted", "--script", str(script), "--budget", "1", "--time", "120",
                  "--max-attempts", "1")
    assert code in (0, 1), (names, code)
    assert not list(tmp_path.glob("logs/crash-*"))
    assert kernel(monkeypatch, env, "resume") in (0, 1, 2)


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[None]:
    """A command run with the test's folder as its data directory starts an embedded
    server there: stop it after the test."""
    yield
    from kernel.store.embedded_server import EmbeddedServer

    EmbeddedServer(tmp_path).stop()


@pytest.mark.usefixtures("own_server")
def test_a_graph_line_nested_deep_is_refused_before_it_is_parsed(
        initialised: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Valid JSON nested 100,000 deep in a node's property: exit 2 naming the line, not a
    RecursionError."""
    from kernel.schema import LATEST_VERSION

    header = {"kind": "header", "format": "kernel-graph", "version": 2,
              "schema": LATEST_VERSION, "contents": False}
    node = ('{"kind": "node", "label": "Goal", "id": "node:deep", "props": {"x": '
            + "[" * 100_000 + "]" * 100_000 + "}}")
    export = tmp_path / "deep.jsonl"
    export.write_text(json.dumps(header) + "\n" + node + "\n")
    code = kernel(monkeypatch, store_env(initialised, tmp_path), "graph", "import", str(export))
    said = capsys.readouterr()
    assert code == 2, said
    assert "deep.jsonl:2:" in said.err and "nested more than" in said.err, said.err


def _alias_bomb() -> str:
    """About 1 KB of YAML whose aliases expand to 9**12 strings ("billion laughs")."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]" for n in range(1, 12)]
    return "version: 1\nproposals: []\n" + "\n".join(lines) + "\n"


@pytest.mark.slow
@pytest.mark.usefixtures("own_server")
@pytest.mark.parametrize("document", [_alias_bomb(), "version: 1\nproposals: &p [*p]\n",
                                      "version: 1\nproposals: " + "[" * 50_000 + "\n"])
def test_a_yaml_alias_bomb_in_a_script_is_refused_at_once(
        initialised: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], document: str) -> None:
    import time

    assert len(document) < 1500 or document.count("[") >= 50_000
    script = tmp_path / "bomb.yaml"
    script.write_text(document)
    began = time.monotonic()
    code = kernel(monkeypatch, store_env(initialised, tmp_path), "solve", "Write value",
                  "--proposer", "scripted", "--script", str(script), "--budget", "1")
    said = capsys.readouterr()
    assert code == 2, said
    assert "bomb.yaml" in said.err and ("aliases expand" in said.err
                                        or "holds it" in said.err
                                        or "nested too deep" in said.err), said.err
    assert time.monotonic() - began < 30  # minutes before
