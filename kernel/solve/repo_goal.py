"""A goal that changes a user's repository (``kernel solve --repo``): the snapshot the
run started from (taken into the graph, checked again on resume and replay), the
repository section of the resolve prompt, and the files and tests a verification runs:
the snapshot with the output's edits applied to a copy, and the repository's own tests."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import TypeAdapter, ValidationError

from embeddings.encoder import Encoder
from kernel.codebase.diagnostics import Diagnostic, syntax_errors
from kernel.codebase.edits import FileEdit, Refusal
from kernel.codebase.impact import impacted_tests
from kernel.codebase.ingest import caps_of, ingest_snapshot, repo_id
from kernel.codebase.repo_prompt import repository_view
from kernel.codebase.snapshot import Snapshot, take_snapshot
from kernel.codebase.symbol_search import code_encoder
from kernel.codebase.workspace import checked_snapshot, edited_files
from kernel.core.envelopes import ConstraintSpec
from kernel.core.goal_node import GoalNode
from kernel.errors import ConfigError
from kernel.protocol.requirements import (
    SETUP,
    RequirementRefused,
    read_requirements,
    source_on_disk,
)
from kernel.protocol.solve_models import ResolutionOutput
from kernel.runtime.repo_input import RepoInput
from kernel.settings import KernelSettings
from kernel.solve.constraint_text import parse_constraint
from kernel.store.base import GraphStore

EDITS_FORMAT = "edits"
REPO_TESTS = "logic:tests:the repository's tests pass"
_EDITS = TypeAdapter(list[FileEdit])
SHOWN_REQUIREMENTS = 30  # the prompt names this many of a repository's requirements


_TAKEN: dict[tuple[str, str], Snapshot] = {}  # what each run's start read: (root, tree hash)


def snapshot_of(repo: RepoInput) -> Snapshot:
    """The run's snapshot: as ``prepare`` read it when the run started or resumed, else
    read now (refused if the tree changed since the run's inputs were recorded)."""
    key = (repo.root, repo.tree_hash)
    if key not in _TAKEN:
        _TAKEN[key] = checked_snapshot(repo.root, repo.tree_hash,
                                       caps_of(KernelSettings.load()))
    return _TAKEN[key]


def repo_input(path: Path, settings: KernelSettings, test_cmd: str | None = None) -> RepoInput:
    """What a run records of the repository at ``path``: refused (ConfigError, exit 2)
    when it is not a readable directory, is over the caps, names a requirement that is not
    plain (an option, a URL, a path), or ``test_cmd`` (a command line, split as a shell
    would) is empty or unbalanced, before anything is stored."""
    argv = None
    if test_cmd is not None:
        try:
            argv = shlex.split(test_cmd)
        except ValueError as exc:
            raise ConfigError(f"--test-cmd {test_cmd!r}: {exc}; quote it as a shell "
                              "would") from None
        if not argv:
            raise ConfigError("--test-cmd is empty: give the command that runs the tests, "
                              "e.g. 'python3 -m unittest'")
    settings.registry_ca()  # a CA bundle that cannot serve is refused now, not at install
    snapshot = take_snapshot(path, caps_of(settings))
    try:
        refused = source_on_disk(snapshot.root)
        if refused is not None:
            raise refused
        read_requirements({f.path: f.text for f in snapshot.files})
    except RequirementRefused as exc:
        raise ConfigError(f"{exc}: {exc.remedy}") from None
    return RepoInput(root=str(snapshot.root), tree_hash=snapshot.tree_hash, test_cmd=argv)


def with_repo_tests(core: list[ConstraintSpec]) -> list[ConstraintSpec]:
    """The core constraints, with "the repository's tests pass" unless one names tests."""
    if any(c.payload.get("check") == "test" for c in core):
        return core
    return [*core, parse_constraint(REPO_TESTS)]


def prepare(store: GraphStore, repo: RepoInput | None, data_dir: Path) -> None:
    """Before a run works on ``repo``: its tree is the one recorded, and its facts are in
    this store (a replay's scratch store too); nothing is rewritten when they are. Symbol
    embeddings are cached under ``data_dir``."""
    if repo is not None:
        _TAKEN.pop((repo.root, repo.tree_hash), None)  # read again: the tree may have changed since
        ingest_snapshot(store, snapshot_of(repo), code_encoder(data_dir))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def prompt_section(store: GraphStore, repo: RepoInput | None, encoder: Encoder,
                   goal: GoalNode) -> dict[str, Any]:
    """The repository as the resolve prompt shows it for ``goal`` (a run on a repository
    only: ``repo`` is never None here); its symbols are searched with ``encoder``."""
    assert repo is not None
    snapshot = snapshot_of(repo)
    failure = "\n".join(_strings(goal.feedback or {}))
    view = repository_view(store, repo_id(snapshot.root), snapshot, goal.description,
                           failure, encoder)
    try:
        requirements = read_requirements({f.path: f.text for f in snapshot.files})
    except RequirementRefused:  # refused when the run started: never reached
        requirements = None
    if requirements is not None:  # the sandbox's "nothing else imports" is not the whole story
        shown = ", ".join(requirements.lines[:SHOWN_REQUIREMENTS]) + (
            f" and {len(requirements.lines) - SHOWN_REQUIREMENTS} more"
            if len(requirements.lines) > SHOWN_REQUIREMENTS else "")
        view["dependencies"] = (f"the requirements in {requirements.source} ({shown}) are "
                                "installed before the tests run, from the package index only")
    return view


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


@dataclass(frozen=True)
class RepoRun:
    """A repository goal's test run before it starts: its payload, the tests the change
    impacts (pytest node ids, from the traversal over the ingested code graph), and what
    is known wrong without running anything (files the edits leave unparseable), and
    whether the edits changed the requirements (an install that fails is then theirs to
    fix, else the environment's)."""

    payload: dict[str, Any]
    impacted: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    requirements_edited: bool = False  # the edits change what the setup installs


def test_inputs(store: GraphStore, repo: RepoInput | None, output: ResolutionOutput,
                ) -> RepoRun | list[dict[str, str]]:
    """The test run: the files (the snapshot with the edits applied), the repository's
    requirements to install first (when it names any; a line that is not plain refuses
    the edits), and the test files pytest runs, those holding impacted tests first, or
    the test command (run as given); before either, the impacted tests alone by their
    node ids (a pytest test command only), whose failure ends the run early; or the
    problems (each with a reason code) that kept the edits out. A run on a repository
    only: ``repo`` is never None here."""
    assert repo is not None
    edits = parse_edits(output)
    if isinstance(edits, str):
        return [{"path": "", "reason": "edits_malformed", "detail": edits}]
    snapshot = snapshot_of(repo)
    files = edited_files(snapshot, edits)
    if isinstance(files, list):
        return [r.as_dict() for r in files if isinstance(r, Refusal)]
    try:
        requirements = read_requirements(files)
    except RequirementRefused as exc:
        return [{"path": exc.source, "reason": "requirement_refused", "detail": str(exc)}]
    changed = sorted({e.path for e in edits})
    impacted = impacted_tests(store, repo_id(snapshot.root), changed)
    found = syntax_errors(files, changed)
    payload: dict[str, Any] = {"files": files}
    if requirements is not None:
        payload[SETUP] = requirements.payload()
    edited = requirements != read_requirements({f.path: f.text for f in snapshot.files})
    if repo.test_cmd:
        command = list(repo.test_cmd)
        payload["commands"] = [command]
        if impacted and runs_pytest(command):
            payload["first_commands"] = [[*command, *impacted]]
        return RepoRun(payload, impacted, found, edited)
    holding = {node.split("::")[0] for node in impacted}
    payload["tests"] = sorted((p for p in files if is_test_file(p)),
                              key=lambda p: (p not in holding, p))
    if impacted:
        payload["first"] = impacted
    return RepoRun(payload, impacted, found, edited)


def runs_pytest(argv: list[str]) -> bool:
    """A test command that is pytest (``pytest ...``, ``python3 -m pytest ...``), to which
    node ids can be added to select the impacted tests; any other runs only as given."""
    program = PurePosixPath(argv[0]).name
    return program in ("pytest", "py.test") or (
        program.startswith("python") and argv[1:3] == ["-m", "pytest"])


__all__ = ["EDITS_FORMAT", "REPO_TESTS", "RepoRun", "parse_edits", "prepare", "prompt_section",
           "repo_input", "snapshot_of", "test_inputs", "with_repo_tests"]
