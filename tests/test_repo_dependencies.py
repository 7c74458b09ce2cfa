"""A repository goal whose repository names dependencies (``requirements.txt``), on both
stores: the first test run installs them in a setup run whose only network is the
package index (one on this machine, tests/package_index.py), the second takes them from
the cache keyed by the requirements' hash without touching the network, and replay
reaches the same summary hash with the index gone. With no registry granted the install
fails: an error on requirements.txt that keeps the goal from resolving. A requirement
line that is not plain is bad input, refused before anything is stored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kernel import api
from kernel._views import run_refusals
from kernel.codebase.edits import sha256_of
from kernel.core.attempts import Attempts
from kernel.core.ledger import load_entries
from kernel.core.run import Run
from kernel.errors import ConfigError
from kernel.protocol.requirements import requirements_hash
from kernel.settings import KernelSettings
from kernel.solve.causes import said
from kernel.solve.repo_goal import repo_input
from kernel.solve.sandbox_runs import DEPENDENCY_CACHE
from kernel.solve.session import replay
from kernel.store.base import GraphStore
from tests.conftest import store_settings
from tests.package_index import OPENSSL, package_index
from tests.sandbox_support import needs_sandbox
from tests.test_repo_solve import recording_proposer, solve_repo_cli

EXAMPLE = Path(__file__).parents[1] / "seeds" / "examples" / "bugfix"
GOAL = "Fix the word count: any run of whitespace separates words"
USES_DEPENDENCY = "import tinypkg\n\n\ndef test_the_dependency_is_there():\n" \
                  "    assert tinypkg.VALUE == 42\n"
needs_openssl = pytest.mark.skipif(OPENSSL is None, reason="the openssl command makes the "
                                                          "local index's certificate")


def _repo(tmp_path: Path) -> Path:
    """The bugfix example, with a test that needs ``tinypkg`` and a requirements.txt."""
    repo = Path(shutil.copytree(EXAMPLE / "repo", tmp_path / "repo"))
    (repo / "requirements.txt").write_text("tinypkg==1.0\n")
    (repo / "tests" / "test_dependency.py").write_text(USES_DEPENDENCY)
    return repo


def _suite_checks(store: GraphStore, outcome: api.Outcome) -> list[dict[str, Any]]:
    """Each attempt's "the repository's tests pass" check detail."""
    tries = Attempts(Run.load(store, outcome.run_id)).of_goal(outcome.root_id)
    return [c.detail for t in tries for c in (t.verification.checks if t.verification else [])
            if "suite" in c.detail.get("tests", {})]


@needs_sandbox
@needs_openssl
@pytest.mark.slow  # a pip install, two sandboxed test runs and a replay per store
def test_dependencies_install_once_then_come_from_the_cache_and_replay_needs_no_network(
        initialised: GraphStore, data_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.rmtree(data_dir / DEPENDENCY_CACHE, ignore_errors=True)  # the session's data dir
    repo = _repo(tmp_path)
    with package_index(tmp_path / "index") as index:
        monkeypatch.setenv("KERNEL_REGISTRY_HOSTS", json.dumps([index.host]))
        monkeypatch.setenv("KERNEL_REGISTRY_INDEX_URL", index.url)
        monkeypatch.setenv("KERNEL_REGISTRY_CERT", str(index.cert))
        settings = store_settings(initialised, data_dir)
        request = api.SolveRequest.checked(goal=GOAL, proposer="scripted",
                                           script=EXAMPLE / "script.yaml", repo=repo)
        outcome = api.solve(initialised, request, settings)
        served = list(index.requests)
    assert outcome.status == "resolved"
    key = requirements_hash(["tinypkg==1.0"])
    wrong, right = _suite_checks(initialised, outcome)
    assert wrong["setup"] == {"source": "requirements.txt", "sha256": key, "installed": True,
                              "cached": False}
    assert right["setup"] == {"source": "requirements.txt", "sha256": key, "installed": True,
                              "cached": True}
    assert right["verdicts"]["tests/test_dependency.py::test_the_dependency_is_there"] == \
        "passed"
    assert served == ["/simple/tinypkg/", "/files/tinypkg-1.0-py3-none-any.whl"]  # once
    runs = [e.data()["response"]["output"]["setup"]
            for e in load_entries(initialised, outcome.run_id)[2] if e.operation == "run_tests"]
    assert [(r["sha256"], r["cached"]) for r in runs] == [(key, False), (key, True)]
    replayed = replay(settings, outcome.run_id)  # the index is gone: recorded, not re-run
    assert replayed.replay_hash == replayed.original_hash and replayed.divergence is None


@needs_sandbox
@pytest.mark.slow
def test_an_install_that_fails_is_an_error_that_blocks_resolution(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No registry granted and nothing cached: the install fails, which is a diagnostic on
    requirements.txt, and the goal is refused at once for it (the environment is at fault,
    not the code: no feedback is asked for, no edit tried again), its advice naming the
    setting. Checks of named tests say they could not run, not that the test is missing.
    The resolve prompt says which requirements the tests will have."""
    shutil.rmtree(data_dir / DEPENDENCY_CACHE, ignore_errors=True)
    monkeypatch.setenv("KERNEL_REGISTRY_HOSTS", "[]")
    settings = store_settings(embedded_store, data_dir)
    request = api.SolveRequest.checked(goal=GOAL, proposer="scripted",
                                       script=EXAMPLE / "script.yaml", repo=_repo(tmp_path))
    recording = recording_proposer(monkeypatch)
    outcome = api.solve(embedded_store, request, settings)
    assert outcome.status == "infeasible"
    asked = next(r for r in recording.requests if r.operation == "resolve")
    assert asked.payload["repository"]["dependencies"] == (  # the model is told
        "the requirements in requirements.txt (tinypkg==1.0) are installed before the tests "
        "run, from the package index only")
    assert [r.operation for r in recording.requests].count("resolve") == 1
    assert "generate_feedback" not in [r.operation for r in recording.requests]
    tries = Attempts(Run.load(embedded_store, outcome.run_id)).of_goal(outcome.root_id)
    assert len(tries) == 1 and tries[0].verification is not None
    checks = tries[0].verification.checks
    assert checks and all(c.detail["failure_mode"] == "dependencies_not_installed"
                          for c in checks)
    cause = ("the repository's dependencies (requirements.txt) could not be installed, so "
             "no test ran: no package registry is granted (KERNEL_REGISTRY_HOSTS is empty): "
             "the dependencies cannot be installed")
    assert sorted(said(c) for c in checks) == [cause, cause]
    named = next(c for c in checks if "suite" not in c.detail["tests"])
    assert named.detail["tests"] == {"test_any_whitespace_separates_words": "NOT_RUN"}
    assert named.repair_suggestion is not None and \
        named.repair_suggestion["fix"].startswith("install the repository's dependencies")
    suite = next(c for c in checks if "suite" in c.detail["tests"])
    assert suite.detail["setup"] == {
        "source": "requirements.txt", "sha256": requirements_hash(["tinypkg==1.0"]),
        "installed": False, "edited": False, "reason": "no package registry is granted "
        "(KERNEL_REGISTRY_HOSTS is empty): the dependencies cannot be installed"}
    (refusal,) = run_refusals(embedded_store, outcome.run_id)
    assert refusal["reasons"] == ["DEPENDENCIES_NOT_INSTALLED"] and refusal["detail"] == cause
    assert refusal["to_proceed"] == [
        "the repository's dependencies (requirements.txt) could not be installed, which no "
        "edit of its code fixes: grant the index's hosts in KERNEL_REGISTRY_HOSTS (its "
        'default is ["pypi.org", "files.pythonhosted.org"]); then solve again']
    rows = embedded_store.execute_adhoc(
        "MATCH (:Attempt)-[:REPORTED]->(d:Diagnostic {code: 'dependencies_not_installed'}) "
        "RETURN DISTINCT d.severity, d.file, d.message", {}, write=False).rows
    assert [list(r) for r in rows] == [[
        "error", "requirements.txt", "the dependencies could not be installed: no package "
        "registry is granted (KERNEL_REGISTRY_HOSTS is empty): the dependencies cannot be "
        "installed"]]


@pytest.mark.slow  # a kernel process per case
@pytest.mark.parametrize("bad", ["not_utf8", "a_folder", "pyproject_not_utf8",
                                 "cert_missing", "cert_not_pem"])
def test_unreadable_requirements_or_registry_cert_exit_2_and_store_nothing(
        initialised: GraphStore, data_dir: Path, tmp_path: Path, bad: str) -> None:
    repo = Path(shutil.copytree(EXAMPLE / "repo", tmp_path / "repo"))
    env = {"KERNEL_REGISTRY_CERT": "/nope.pem" if bad == "cert_missing"
           else str(repo / "README.md")} if bad.startswith("cert") else {}
    if bad == "not_utf8":
        (repo / "requirements.txt").write_bytes(b"six\xff\n")
    elif bad == "a_folder":
        (repo / "requirements.txt").mkdir()
    elif bad == "pyproject_not_utf8":
        (repo / "pyproject.toml").write_bytes(b'[project]\ndependencies = ["six\xff"]\n')
    done = solve_repo_cli(initialised, data_dir, repo, env)
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    expected = {"not_utf8": "requirements.txt is not UTF-8 text",
                "a_folder": "requirements.txt is a folder, not a file",
                "pyproject_not_utf8": "pyproject.toml is not UTF-8 text",
                "cert_missing": "KERNEL_REGISTRY_CERT='/nope.pem'",
                "cert_not_pem": "is not a PEM CA bundle"}[bad]
    assert line.startswith("error: ") and expected in line, line
    assert api.list_runs(initialised) == []


def test_a_requirement_that_is_not_plain_is_bad_input(tmp_path: Path) -> None:
    repo = Path(shutil.copytree(EXAMPLE / "repo", tmp_path / "repo"))
    (repo / "requirements.txt").write_text("tinypkg==1.0\n--index-url http://evil\n")
    with pytest.raises(ConfigError, match=r"requirements.txt:2: '--index-url http://evil' is "
                                          r"an option.*keep only plain requirements"):
        repo_input(repo, KernelSettings())


@needs_sandbox
@pytest.mark.slow
def test_an_edit_that_adds_a_requirement_that_is_not_plain_is_refused(
        embedded_store: GraphStore, data_dir: Path, tmp_path: Path) -> None:
    """The first attempt's edits add a requirements.txt pointing pip at another index:
    refused with its reason (nothing installed, nothing run), and the retry resolves."""
    script = yaml.safe_load((EXAMPLE / "script.yaml").read_text())
    first = next(p for p in script["proposals"] if p["operation"] == "resolve")
    evil = "tinypkg==1.0\n--extra-index-url https://evil.example/simple\n"
    first["output"]["content"] = json.dumps([
        *json.loads(first["output"]["content"]),
        {"path": "requirements.txt", "kind": "replace", "before_sha256": None,
         "after_sha256": sha256_of(evil.encode()), "content": evil}])
    (tmp_path / "evil.yaml").write_text(yaml.safe_dump(script))
    repo = Path(shutil.copytree(EXAMPLE / "repo", tmp_path / "repo"))
    request = api.SolveRequest.checked(goal=GOAL, proposer="scripted",
                                       script=tmp_path / "evil.yaml", repo=repo)
    outcome = api.solve(embedded_store, request, store_settings(embedded_store, data_dir))
    assert outcome.status == "resolved"
    tries = Attempts(Run.load(embedded_store, outcome.run_id)).of_goal(outcome.root_id)
    assert [t.verdict for t in tries] == ["UNSAT", "SAT"]
    assert tries[0].verification is not None
    refused = [c.detail for c in tries[0].verification.checks if not c.passed]
    assert refused and all(d["failure_mode"] == "edit_refused" for d in refused)
    assert refused[0]["edits_refused"] == [{
        "path": "requirements.txt", "reason": "requirement_refused",
        "detail": "requirements.txt:2: '--extra-index-url https://evil.example/simple' is an "
                  "option, not a requirement (options such as -e, -r and --index-url are "
                  "refused: the kernel chooses the index)"}]

