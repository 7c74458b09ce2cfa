"""A repository taken into the graph (both stores): its files, symbols and edges, the
impact of changing a function, the tests that cover it, an incremental re-ingest that
parses (and embeds) only what changed, the files a goal points at by meaning when it
names none, and bad input refused before anything is stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.codebase.impact import impact, related
from kernel.codebase.ingest import ingest, repo_id
from kernel.codebase.python_facts import python_facts
from kernel.codebase.repo_prompt import repository_view
from kernel.codebase.snapshot import Caps, take_snapshot
from kernel.codebase.symbol_search import code_encoder, near_goal
from kernel.repositories import code_graph
from kernel.settings import KernelSettings
from kernel.store.base import GraphStore
from tests.conftest import store_env

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def parse(text):\n    return text.split()\n\n\n"
                   "def count(text):\n    return len(parse(text))\n",
    "pkg/report.py": "from pkg.core import count\n\n\ndef summary(text):\n"
                     "    return f'{count(text)} words'\n\n\nclass Reporter:\n"
                     "    def show(self, text):\n        return self.header() + summary(text)\n\n"
                     "    def header(self):\n        return '# '\n",
    "pkg/unrelated.py": "def other():\n    return 1\n",
    "tests/test_report.py": "from pkg import report\nfrom pkg.core import parse\n\n\n"
                            "def test_summary():\n    assert report.summary('a b') == '2 words'\n"
                            "\n\ndef test_parse():\n    assert parse('a b') == ['a', 'b']\n\n\n"
                            "def test_other():\n    from pkg.unrelated import other\n"
                            "    assert other() == 1\n",
    ".gitignore": "build/\n",
    "build/generated.py": "def ignored():\n    return 0\n",
    "logo.png": "\x89PNG\x00\x01binary",
}



def _repository(root: Path, git: bool = True) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    if git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        subprocess.run(["git", "-C", str(root), "add", "pkg", ".gitignore"], check=True)
    return root  # tests/ and logo.png stay untracked but not ignored


@pytest.fixture
def settings(tmp_path_factory: pytest.TempPathFactory) -> KernelSettings:
    """A data directory of the test's own: the symbol embeddings' cache starts empty."""
    return KernelSettings(data_dir=tmp_path_factory.mktemp("data"))


def _names(rows: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return sorted(r["qname"] for r in rows)


def test_the_snapshot_holds_tracked_and_untracked_files_never_ignored_ones(tmp_path: Path) -> None:
    snap = take_snapshot(_repository(tmp_path), Caps(100, 10_000, 20))
    by_path = {f.path: f for f in snap.files}
    assert sorted(by_path) == [".gitignore", "logo.png", "pkg/__init__.py", "pkg/core.py",
                               "pkg/report.py", "pkg/unrelated.py", "tests/test_report.py"]
    assert by_path["logo.png"].binary and by_path["logo.png"].text is None
    assert by_path["pkg/core.py"].oversized and by_path["pkg/core.py"].text is None  # cap 20
    assert by_path["tests/test_report.py"].is_test and not by_path["pkg/core.py"].is_test
    (tmp_path / "pkg/unrelated.py").write_text("def other():\n    return 2\n")
    assert take_snapshot(tmp_path, Caps(100, 10_000, 20)).tree_hash != snap.tree_hash


def test_a_directory_outside_git_is_walked_without_dot_git(tmp_path: Path) -> None:
    _repository(tmp_path, git=False)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("x")
    paths = [f.path for f in take_snapshot(tmp_path, Caps(100, 10_000, 1000)).files]
    assert "build/generated.py" in paths and not any(p.startswith(".git/") for p in paths)


def test_calls_resolve_through_imports_self_and_module_aliases() -> None:
    facts = python_facts("pkg/report.py", FILES["pkg/report.py"], test_file=False)
    calls = {s.qname: s.calls for s in facts.symbols}
    assert calls == {"pkg.report.summary": ["pkg.core.count"],
                     "pkg.report.Reporter": [],
                     "pkg.report.Reporter.show": ["pkg.report.Reporter.header",
                                                  "pkg.report.summary"],
                     "pkg.report.Reporter.header": []}
    tests = python_facts("tests/test_report.py", FILES["tests/test_report.py"], test_file=True)
    assert {s.qname: s.calls for s in tests.symbols}["tests.test_report.test_summary"] == \
        ["pkg.report.summary"]


def test_impact_of_a_change_is_its_callers_closed_and_the_tests_that_reach_them(
        initialised: GraphStore, tmp_path: Path, settings: KernelSettings) -> None:
    root = _repository(tmp_path)
    first = ingest(initialised, root, settings)
    assert (first.seen, first.changed, first.parsed, first.removed) == (7, 7, 5, 0)
    repo = repo_id(root.resolve())
    found = impact(initialised, repo, "pkg.core.parse")
    assert [(d["qname"], d["depth"]) for d in found.dependents] == [
        ("pkg.core.count", 1), ("tests.test_report.test_parse", 1),
        ("pkg.report.summary", 2), ("pkg.report.Reporter.show", 3),
        ("tests.test_report.test_summary", 3)]
    assert _names(found.tests) == ["tests.test_report.test_parse",  # type: ignore[arg-type]
                                   "tests.test_report.test_summary"]
    assert found.importers == ["pkg/report.py", "tests/test_report.py"]
    assert code_graph.size(initialised, repo)["TESTS"] == 3  # summary, parse, other
    words = [r["name"] for r in related(initialised, repo, "counting is wrong in count()")]
    assert words == ["pkg.core.count"]


def test_every_repository_node_carries_a_whole_caption(initialised: GraphStore,
                                                      tmp_path: Path,
                                                      settings: KernelSettings) -> None:
    root = _repository(tmp_path)
    (root / "pkg/long.py").write_text("".join(f"x{i} = {i}\n" for i in range(450)))
    ingest(initialised, root, settings)
    rows = initialised.execute_adhoc(
        "MATCH (n) WHERE n:Repository OR n:File OR n:Chunk OR n:Symbol "
        "RETURN labels(n)[0] AS label, n.caption AS caption, n.id AS id", {}, write=False).rows
    captions: dict[str, set[str]] = {}
    for label, caption, node_id in rows:
        assert caption, node_id
        captions.setdefault(label, set()).add(caption)
    assert captions["Repository"] == {str(root.resolve())}
    assert {"pkg/core.py", "logo.png", "pkg/long.py"} <= captions["File"]
    assert captions["Chunk"] == {"pkg/long.py:1-200", "pkg/long.py:201-400",
                                 "pkg/long.py:401-450"}
    assert {"pkg.core.parse", "pkg.report.Reporter.show"} <= captions["Symbol"]


def test_a_second_ingest_parses_only_the_changed_file_and_keeps_its_callers(
        initialised: GraphStore, tmp_path: Path, settings: KernelSettings) -> None:
    root = _repository(tmp_path)
    ingest(initialised, root, settings)
    repo = repo_id(root.resolve())
    before = code_graph.size(initialised, repo)
    (root / "pkg/core.py").write_text(FILES["pkg/core.py"].replace(
        "return text.split()", "return [w for w in text.split() if w]"))
    (root / "pkg/unrelated.py").unlink()
    again = ingest(initialised, root, settings)
    assert (again.seen, again.changed, again.parsed, again.removed) == (6, 1, 1, 1)
    found = impact(initialised, repo, "count")
    assert _names(found.dependents) == [  # type: ignore[arg-type]
        "pkg.report.Reporter.show", "pkg.report.summary", "tests.test_report.test_summary"]
    assert _names(found.tests) == ["tests.test_report.test_summary"]  # type: ignore[arg-type]
    after = code_graph.size(initialised, repo)
    assert after["CALLS"] == before["CALLS"] - 1  # test_other called the removed function
    assert after["Symbol"] == before["Symbol"] - 1
    unchanged = ingest(initialised, root, settings)
    assert (unchanged.changed, unchanged.parsed, unchanged.removed) == (0, 0, 0)
    assert code_graph.size(initialised, repo) == after


def _cli(store: GraphStore, data_dir: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env=store_env(store, data_dir))
    return result.exit_code, result.output


@pytest.mark.slow  # a kernel process per case
@pytest.mark.parametrize("bad", ["not_a_dir", "symlink_out", "over_files", "over_bytes"])
def test_bad_input_is_refused_with_exit_2_and_nothing_stored(
        initialised: GraphStore, data_dir: Path, tmp_path: Path, bad: str) -> None:
    root = _repository(tmp_path / "repo")
    env: dict[str, str] = {}
    target = root
    if bad == "not_a_dir":
        target = root / "pkg/core.py"
    elif bad == "symlink_out":
        (tmp_path / "secret.txt").write_text("s")
        os.symlink(tmp_path / "secret.txt", root / "pkg" / "link.txt")
    elif bad == "over_files":
        env = {"KERNEL_REPO_MAX_FILES": "3"}
    else:
        env = {"KERNEL_REPO_MAX_BYTES": "100"}
    done = subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "repo", "ingest",
         str(target)], capture_output=True, text=True, check=False,
        env={**os.environ, **store_env(initialised, data_dir), **env, "COLUMNS": "300"})
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and ("KERNEL_REPO_MAX" in line or "give" in line
                                            or "remove it" in line), line
    assert code_graph.known_files(initialised, repo_id(target.resolve())) == {}
    assert code_graph.known_files(initialised, repo_id(root.resolve())) == {}


def test_the_commands_ingest_and_print_impact(initialised: GraphStore, data_dir: Path,
                                              tmp_path: Path) -> None:
    root = _repository(tmp_path / "repo")
    code, output = _cli(initialised, data_dir, "repo", "ingest", str(root), "--json")
    assert code == 0, output
    assert json.loads(output)["parsed"] == 5
    assert code_graph.known_files(initialised, repo_id(root.resolve()))  # the same store
    code, output = _cli(initialised, data_dir, "repo", "impact", "pkg.core.count",
                        "--path", str(root), "--json")
    assert code == 0, output
    shown = json.loads(output)
    assert [t["qname"] for t in shown["tests"]] == ["tests.test_report.test_summary"]
    code, output = _cli(initialised, data_dir, "repo", "impact", "pkg.core.count",
                        "--path", str(root))
    assert code == 0 and "pkg.report.summary" in output and "test_summary" in output, output


def test_the_benchmark_reingests_one_changed_file(initialised: GraphStore, tmp_path: Path,
                                                  settings: KernelSettings) -> None:
    from kernel.bench.repo import bench_repo

    root = _repository(tmp_path / "repo")
    figures = {f.name.strip(): f.value for f in
               bench_repo(initialised, root, Caps(100, 100_000, 10_000), "pkg.core.parse",
                          code_encoder(settings.data_dir))}
    assert figures["files"] == 7 and figures["Python files parsed"] == 5
    assert (figures["files changed on re-ingest"], figures["files parsed on re-ingest"]) == (1, 1)
    assert (figures["symbols embedded"], figures["symbols embedded on re-ingest"]) == (7, 1)
    assert (figures["impacted symbols"], figures["covering tests"]) == (5, 2)
    assert figures["nodes"] == 1 + 7 + 10 and figures["TESTS"] == 3
    assert list((tmp_path / "repo").rglob("*.py")) and "_bench_changed_function" not in \
        (root / "pkg/report.py").read_text()


BEHAVIOURS = {
    "shop/__init__.py": "",
    "shop/money.py": 'def to_cents(amount):\n    """Convert a price in dollars to whole cents, '
                     'rounding half up."""\n    return int(amount * 100)\n',
    "shop/mail.py": 'def send_welcome(address):\n    """Send the welcome email to a user who '
                    'just signed up."""\n    return f"mail to {address}"\n',
    "shop/stock.py": 'def reserve(sku, quantity):\n    """Hold items of a product in the '
                     'warehouse until the order ships."""\n    return (sku, quantity)\n',
    "tests/test_shop.py": "from shop.mail import send_welcome\n\n\ndef test_mail():\n"
                          "    assert send_welcome('a@b') == 'mail to a@b'\n",
}
GOAL = "A price of 0.295 dollars comes out one cent short; it should round up"


def test_a_goal_that_names_no_file_finds_it_by_meaning(
        initialised: GraphStore, tmp_path: Path, settings: KernelSettings) -> None:
    """The goal names no file and no symbol; the vector index over the symbols'
    embeddings brings the module that converts prices into the resolve prompt."""
    for rel, text in BEHAVIOURS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    first = ingest(initialised, tmp_path, settings)
    repo = repo_id(tmp_path.resolve())
    assert first.embedded == 3  # one per symbol outside the tests, nothing cached yet
    assert related(initialised, repo, GOAL) == []  # no name the goal mentions
    encoder = code_encoder(settings.data_dir)
    nearest = near_goal(initialised, repo, encoder, GOAL)
    assert nearest[0]["name"] == "shop.money.to_cents", nearest
    view = repository_view(initialised, repo, take_snapshot(tmp_path, Caps(100, 100_000, 10_000)),
                           GOAL, "", encoder)
    assert view["named_by_goal"] == [] and view["near_goal"][0] == "shop/money.py"
    assert "shop/money.py" in view["files"]


def test_the_related_command_shows_names_and_meaning(initialised: GraphStore, data_dir: Path,
                                                     tmp_path: Path) -> None:
    for rel, text in BEHAVIOURS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert _cli(initialised, data_dir, "repo", "ingest", str(tmp_path))[0] == 0
    code, output = _cli(initialised, data_dir, "repo", "related", GOAL, "--path",
                        str(tmp_path), "--json")
    assert code == 0, output
    shown = json.loads(output)
    assert shown["named_by_goal"] == []
    assert shown["near_goal"][0]["name"] == "shop.money.to_cents"


def test_a_reingest_embeds_only_symbols_whose_text_changed(
        initialised: GraphStore, tmp_path: Path, settings: KernelSettings) -> None:
    """A changed body keeps its symbol's name, signature and docstring: the file is parsed
    again, its embedding comes from the cache; a changed docstring is embedded again."""
    for rel, text in BEHAVIOURS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    ingest(initialised, tmp_path, settings)
    money = tmp_path / "shop/money.py"
    money.write_text(BEHAVIOURS["shop/money.py"].replace("int(amount * 100)",
                                                         "round(amount * 100)"))
    again = ingest(initialised, tmp_path, settings)
    assert (again.changed, again.parsed, again.embedded) == (1, 1, 0)
    money.write_text(money.read_text().replace("rounding half up", "rounding half even"))
    assert ingest(initialised, tmp_path, settings).embedded == 1
    repo = repo_id(tmp_path.resolve())
    assert near_goal(initialised, repo, code_encoder(settings.data_dir),
                     GOAL)[0]["name"] == "shop.money.to_cents"  # the new symbol is indexed
