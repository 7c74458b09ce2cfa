"""A goal that changes a user's repository (``kernel solve --repo``): the snapshot the
run started from (taken into the graph, checked again on resume and replay), the
repository section of the resolve prompt, and the files and tests a verification runs:
the snapshot with the output's edits applied to a copy, and the repository's own tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import TypeAdapter, ValidationError

from kernel.codebase.edits import FileEdit, Refusal
from kernel.codebase.ingest import caps_of, ingest_snapshot, repo_id
from kernel.codebase.repo_prompt import repository_view
from kernel.codebase.snapshot import Snapshot, take_snapshot
from kernel.codebase.workspace import checked_snapshot, edited_files
from kernel.core.envelopes import ConstraintSpec
from kernel.core.goal_node import GoalNode
from kernel.protocol.solve_models import ResolutionOutput
from kernel.runtime.kernel import Kernel
from kernel.runtime.repo_input import RepoInput
from kernel.settings import KernelSettings
from kernel.solve.constraint_text import parse_constraint
from kernel.store.base import GraphStore

EDITS_FORMAT = "edits"
REPO_TESTS = "logic:tests:the repository's tests pass"
_EDITS = TypeAdapter(list[FileEdit])


_TAKEN: dict[RepoInput, Snapshot] = {}  # the snapshot each run's start read, by its input


def snapshot_of(repo: RepoInput) -> Snapshot:
    """The run's snapshot: as ``prepare`` read it when the run started or resumed, else
    read now (refused if the tree changed since the run's inputs were recorded)."""
    if repo not in _TAKEN:
        _TAKEN[repo] = checked_snapshot(repo.root, repo.tree_hash,
                                        caps_of(KernelSettings.load()))
    return _TAKEN[repo]


def repo_input(path: Path, settings: KernelSettings) -> RepoInput:
    """What a run records of the repository at ``path``: refused (ConfigError, exit 2)
    when it is not a readable directory or is over the caps, before anything is stored."""
    snapshot = take_snapshot(path, caps_of(settings))
    return RepoInput(root=str(snapshot.root), tree_hash=snapshot.tree_hash)


def with_repo_tests(core: list[ConstraintSpec]) -> list[ConstraintSpec]:
    """The core constraints, with "the repository's tests pass" unless one names tests."""
    if any(c.payload.get("check") == "test" for c in core):
        return core
    return [*core, parse_constraint(REPO_TESTS)]


def prepare(store: GraphStore, repo: RepoInput | None) -> None:
    """Before a run works on ``repo``: its tree is the one recorded, and its facts are in
    this store (a replay's scratch store too); nothing is rewritten when they are."""
    if repo is not None:
        _TAKEN.pop(repo, None)  # read again: the tree may have changed since
        ingest_snapshot(store, snapshot_of(repo))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def prompt_section(k: Kernel, goal: GoalNode) -> dict[str, Any]:
    """The repository as the resolve prompt shows it for ``goal``."""
    assert k.repo is not None
    snapshot = snapshot_of(k.repo)
    failure = "\n".join(_strings(goal.feedback or {}))
    return repository_view(k.store, repo_id(snapshot.root), snapshot, goal.description, failure)


def parse_edits(output: ResolutionOutput) -> list[FileEdit] | str:
    """The output's edits, or what is wrong with its shape."""
    if output.format != EDITS_FORMAT:
        return f"a repository goal's output has format {EDITS_FORMAT!r}, not {output.format!r}"
    try:
        return _EDITS.validate_json(output.content)
    except ValidationError as exc:
        first = exc.errors()[0]
        return f"the edits do not parse: {'.'.join(map(str, first['loc']))}: {first['msg']}"


def is_test_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def test_inputs(k: Kernel, output: ResolutionOutput) -> tuple[dict[str, str], list[str]] | \
        list[dict[str, str]]:
    """The files a test run gets (the snapshot with the edits applied) and the test files
    to run, or the problems (each with a reason code) that kept the edits out."""
    assert k.repo is not None
    edits = parse_edits(output)
    if isinstance(edits, str):
        return [{"path": "", "reason": "edits_malformed", "detail": edits}]
    files = edited_files(snapshot_of(k.repo), edits)
    if isinstance(files, list):
        return [r.as_dict() for r in files if isinstance(r, Refusal)]
    return files, sorted(p for p in files if is_test_file(p))


__all__ = ["EDITS_FORMAT", "REPO_TESTS", "parse_edits", "prepare", "prompt_section",
           "repo_input", "snapshot_of", "test_inputs", "with_repo_tests"]
