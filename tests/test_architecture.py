"""The structure the code promises: no import cycle between modules or subpackages
(function-local imports count, and so do ``if TYPE_CHECKING:`` ones: a type that needs
a package above is a loop all the same), every layer of docs/architecture.md imports
only from itself and below, and the library API loads no model SDK or embedding
model."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("kernel", "resolvers", "embeddings")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path, known: Mapping[str, Path] = MODULES) -> set[str]:
    """The project modules ``name`` imports anywhere in its body, ``TYPE_CHECKING``
    blocks included."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package[:len(package) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in known and m != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def _subpackage(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_no_module_imports_itself_through_others() -> None:
    assert _cycles(GRAPH) == []


def _package_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {}
    for module, imported in graph.items():
        for other in imported:
            if _subpackage(module) != _subpackage(other):
                packages.setdefault(_subpackage(module), set()).add(_subpackage(other))
    return packages


def test_no_subpackage_cycle() -> None:
    assert _cycles(_package_graph(GRAPH)) == []


def test_a_type_checking_import_that_closes_a_loop_is_a_loop(tmp_path: Path) -> None:
    """The loop the runtime and the knowledge graph once made: the graph's readers
    named the runtime's ``Kernel`` for their types only."""
    files = {
        "app.runtime.kernel": "from app.kg.reuse import reuse\n",
        "app.kg.reuse": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                        "    from app.runtime.kernel import Kernel\n"
                        "def reuse(k: 'Kernel') -> None: ...\n"}
    known = {}
    for name, text in files.items():
        path = tmp_path / f"{name.replace('.', '_')}.py"
        path.write_text(text)
        known[name] = path
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    assert _cycles(graph) == [["app.kg.reuse", "app.runtime.kernel"]]
    assert _cycles(_package_graph(graph)) == [["app.kg", "app.runtime"]]


def test_the_cycle_check_sees_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


BOTTOM = ("kernel.errors", "kernel.settings", "kernel.paths", "kernel.disk_space",
          "kernel.store")


# Every layer of docs/architecture.md, from the bottom up, with what it may import.
@pytest.mark.parametrize(("layer", "may_import"), [
    *((module, BOTTOM) for module in BOTTOM),
    ("kernel.core", (*BOTTOM, "kernel.core")),
    ("kernel.protocol", ("kernel.protocol", "kernel.core", "kernel.errors")),
    ("kernel.repositories", ("kernel.repositories", "kernel.core", "kernel.protocol",
                             *BOTTOM)),
    ("resolvers", ("resolvers", "kernel.repositories", "kernel.protocol", "kernel.core",
                   *BOTTOM, "kernel.user_files")),
    ("embeddings", ("embeddings", "kernel.errors")),
    ("kernel.proposals", ("kernel.proposals", "kernel.protocol", "kernel.core",
                          "kernel.refusal", *BOTTOM)),
    ("kernel.codebase", ("kernel.codebase", "kernel.repositories", "kernel.core", "embeddings",
                         *BOTTOM)),
    ("kernel.kg", ("kernel.kg", "kernel.repositories", "kernel.proposals", "kernel.protocol",
                   "kernel.core", "embeddings", *BOTTOM)),
    ("kernel.runtime", ("kernel.runtime", "kernel.kg", "kernel.repositories", "kernel.proposals",
                        "kernel.protocol", "kernel.core", "kernel.refusal", "embeddings",
                        *BOTTOM)),
])
def test_a_layer_imports_only_what_is_below_it(layer: str, may_import: tuple[str, ...]) -> None:
    reaching = sorted(
        f"{module} -> {other}" for module, imported in GRAPH.items()
        if module == layer or module.startswith(layer + ".")
        for other in imported
        if not any(other == allowed or other.startswith(allowed + ".") for allowed in may_import))
    assert reaching == []


def _imports_of(package: Path, forbidden: str) -> list[str]:
    """Every import of ``forbidden`` or a module under it by a module under ``package``
    (``import``, ``from ... import``, ``import_module("...")``, in a function or an
    ``if TYPE_CHECKING:`` block all the same), as ``path:line: module``."""
    def named(node: ast.AST) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        if isinstance(node, ast.ImportFrom) and not node.level:
            return [node.module or ""]
        if isinstance(node, ast.Call) and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) \
                and ast.unparse(node.func).split(".")[-1] in ("import_module", "__import__"):
            return [node.args[0].value]
        return []

    return [f"{path.relative_to(package.parent)}:{node.lineno}: {name}"
            for path in sorted(package.rglob("*.py"))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            for name in named(node)
            if name == forbidden or name.startswith(forbidden + ".")]


def test_the_kernel_imports_no_resolver() -> None:
    """Resolvers are handed to the kernel (``kernel.protocol.resolver_set``), never
    imported by it."""
    assert _imports_of(ROOT / "kernel", "resolvers") == []


def test_the_resolver_check_sees_every_form_of_import(tmp_path: Path) -> None:
    kernel = tmp_path / "kernel"
    (kernel / "solve").mkdir(parents=True)
    (kernel / "clean.py").write_text("import resolvers_like\nfrom kernel.protocol import x\n")
    (kernel / "top.py").write_text("import resolvers.human\n")
    (kernel / "solve" / "local.py").write_text(
        "def f():\n    from resolvers.sandbox import runner\n    return runner\n")
    (kernel / "solve" / "typing_only.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from resolvers import scripted\n")
    (kernel / "by_name.py").write_text(
        "import importlib\nmodule = importlib.import_module('resolvers.self_model')\n")
    assert _imports_of(kernel, "resolvers") == [
        "kernel/by_name.py:2: resolvers.self_model", "kernel/solve/local.py:2: resolvers.sandbox",
        "kernel/solve/typing_only.py:3: resolvers", "kernel/top.py:1: resolvers.human"]


# Where a Cypher statement may be named: the store, the aggregates in kernel/core (each
# class there owns its statements) and the repositories.
NAMING_STATEMENTS = ("kernel/store/", "kernel/core/", "kernel/repositories/")


def _statement_names() -> set[str]:
    names = set()
    for path in (ROOT / "cypher").rglob("*.cypher"):
        parts = path.relative_to(ROOT / "cypher").parts
        if parts[0] in ("neo4j", "falkordb"):
            parts = parts[1:]
        if not parts[0].startswith("_"):
            names.add("/".join(parts).removesuffix(".cypher"))
    return names


def _named_statements(path: Path, names: set[str]) -> list[str]:
    """Every string in ``path`` that is a statement's name, or a composed string that
    starts like one (``"analytics/" + name``), with its line."""
    prefixes = {n.split("/")[0] + "/" for n in names}
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                (node.value in names or node.value in prefixes):
            found.append(f"{node.lineno}: {node.value}")
    return found


@pytest.mark.slow
def test_no_module_outside_the_store_and_the_repositories_names_a_statement() -> None:
    names = _statement_names()
    naming = sorted(
        f"{path.relative_to(ROOT)}:{hit}" for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if not str(path.relative_to(ROOT)).startswith(NAMING_STATEMENTS)
        for hit in _named_statements(path, names))
    assert naming == []


def test_the_statement_check_sees_a_named_statement(tmp_path: Path) -> None:
    path = tmp_path / "step.py"
    path.write_text('rows = store.run("goal/wakes", {"goal_id": g})\n'
                    'more = store.run("analytics/" + name, {})\n')
    assert _named_statements(path, _statement_names()) == ["1: goal/wakes", "2: analytics/"]


def test_importing_the_library_api_loads_no_model_sdk_or_embedding_model() -> None:
    heavy = ("anthropic", "torch", "sentence_transformers", "transformers")
    probe = ("import sys, kernel.api; "
             f"print(sorted(m for m in {heavy!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("command", [["--help"], ["status"], ["runs"], ["query", "RETURN 1"]])
def test_commands_that_read_the_store_load_no_model_planner_or_other_driver(
        command: list[str], data_dir: Path) -> None:
    """`kernel --help`, `status`, `runs` and `query` start in a fraction of a second: they
    import no model client, no embedding model, no Z3 and not the Neo4j driver."""
    heavy = ("anthropic", "torch", "sentence_transformers", "transformers", "onnxruntime",
             "z3", "neo4j", "kernel.solve.dispatch", "kernel.plan.planner")
    probe = ("import sys\nfrom kernel.cli.app import main\n"
             f"sys.argv = ['kernel', *{command!r}]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             f"print(sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT, check=True, env={**os.environ, "KERNEL_DATA_DIR": str(data_dir),
                                                     "KERNEL_GRAPH": "embedded"})
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr[-500:]


def _blocks(source: str) -> list[Any]:
    """Every function, method and closure radon sees in the source (not classes: radon
    lists their methods on their own, and a class's total is no function's)."""
    from radon.complexity import cc_visit
    from radon.visitors import Class

    found: dict[tuple[int, str], Any] = {}
    pending = [b for b in cc_visit(source) if not isinstance(b, Class)]
    while pending:
        block = pending.pop()
        found[(block.lineno, block.name)] = block
        pending += list(block.closures)
    return list(found.values())


def _too_complex(source: str, where: str) -> list[str]:
    from radon.complexity import cc_rank

    return sorted(f"{where}:{b.lineno} {b.name} {cc_rank(b.complexity)} ({b.complexity})"
                  for b in _blocks(source) if cc_rank(b.complexity) not in ("A", "B", "C"))


@pytest.mark.slow
def test_no_function_is_more_complex_than_rank_c() -> None:
    """Cyclomatic complexity (radon) of every function, method and closure in the
    packages: one ranking D or worse (above 20) is split before it lands."""
    assert [line for path in MODULES.values()
            for line in _too_complex(path.read_text(encoding="utf-8"),
                                     str(path.relative_to(ROOT)))] == []


def test_the_complexity_check_sees_a_complex_method() -> None:
    branches = "\n".join(f"        if x == {i}:\n            return {i}" for i in range(25))
    source = f"class A:\n    def m(self, x):\n{branches}\n        return -1\n"
    assert [line.split()[1] for line in _too_complex(source, "a.py")] == ["m"]
