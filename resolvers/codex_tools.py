"""``codex-tools-0``: runs commands and tests in a sandboxed workspace.

Every command goes through the Constitution first; a refused command returns its reason
code and never runs. Files to write into the workspace come with the request, so the
resolver never needs a shell. Test files named under ``tests`` run with the kernel's own
pytest launcher, and their verdicts come from its report. The tests a change impacts
may run first (``first``: pytest node ids; ``first_commands``: argvs run before
``commands``): when they fail (exit status 1, pytest's "tests failed") the rest does not
run, so a wrong change is answered in the time of the few tests it touches. Any other
status (pytest's 4 or 5: a node id it could not find, nothing collected) lets the whole
suite decide. A repository's dependencies (``setup``: its requirements and their hash)
are installed first, in a setup run of their own whose only network is the package
registry, or taken from the cache of an earlier install (dependency_setup.py), and bound
read-only into every command and test run; when they cannot be installed nothing else
runs, and the result's ``setup`` says why. The workspace is removed once the request is
answered: what it produced is in the result.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

from kernel.protocol import (
    DeadlineReached,
    EnvironmentFault,
    Estimate,
    PermanentError,
    Resolution,
    ResolveRequest,
    file_names,
)
from kernel.protocol.requirements import SETUP
from kernel.protocol.resolver_ids import CODEX_ID
from kernel.protocol.test_runs import runs_in
from resolvers import dependency_setup
from resolvers.sandbox import CommandRequest, Constitution, Reason, RunResult, Sandbox
from resolvers.sandbox.runner import isolation_problem

RESOLVER_ID = CODEX_ID
COST_PER_INVOCATION = 0.01  # USD per command, unless the run sets its own (sandbox_run_usd)


TESTS_FAILED = 1  # pytest's exit status when tests ran and some failed


def _setup_name(workspace: str) -> str:
    """The setup run's workspace, beside the test run's: named by the same first part (a
    killed run's leftovers are found by it) and kept short (its proxy's socket path must
    fit a unix socket's 108 bytes)."""
    digest = hashlib.sha256(workspace.encode()).hexdigest()[:10]
    return f"{workspace.split('-')[0]}-setup-{digest}"


def _stops(result: dict[str, Any]) -> bool:
    """An impacted-first run that failed: the rest need not run."""
    return bool(result["ran"]) and result["reason"] is None and \
        result["exit_code"] == TESTS_FAILED


class CodexTools:
    """payload: ``{"files": {relative path: text}, "setup": {"source", "requirements",
    "sha256"}, "first_commands": [argv, ...], "commands": [argv, ...], "first": [pytest
    node id, ...], "tests": [test file, ...]}`` (the setup first, then the commands,
    then the tests, if any; each ``first`` part before its own). ``cache_root``: where
    installed dependencies are kept (None: a setup is refused)."""

    id = RESOLVER_ID

    def __init__(self, workspace: Path, policy: Constitution | None = None,
                 deadline: float | None = None,
                 cost_per_command: float = COST_PER_INVOCATION,
                 cache_root: Path | None = None) -> None:
        self.sandbox = Sandbox(workspace, policy)
        self.deadline = deadline  # time.monotonic() at which the caller's wall time ends
        self.cost_per_command = cost_per_command
        self.cache_root = cache_root
        self.setup: dict[str, Any] | None = None  # the last request's setup record

    def estimate_cost_time(self, request: ResolveRequest) -> Estimate:
        runs = runs_in(request.payload)
        return Estimate(cost_usd=self.cost_per_command * runs,
                        seconds=self.sandbox.policy.max_wall_seconds * runs)

    def resolve(self, request: ResolveRequest) -> Resolution:
        """Raises EnvironmentFault, before anything runs, when the sandbox cannot isolate
        a command here: a refusal for that reason would blame the code under test."""
        problem = isolation_problem()
        if problem is not None:
            raise EnvironmentFault(f"the sandbox is unavailable: {problem}")
        start = time.perf_counter()
        self.setup = None
        try:
            results = self._run(request)
        finally:
            self.sandbox.remove()
        commands = max(len(results) + bool(self.setup and self.setup.get("ran")), 1)
        output: dict[str, Any] = {
            "results": results, "passed": all(r["ran"] and r["reason"] is None
                                              and r["exit_code"] == 0 for r in results)}
        if self.setup is not None:
            output |= {"setup": self.setup, "passed": output["passed"]
                       and bool(self.setup["installed"])}
        return Resolution(output=output, cost_usd=self.cost_per_command * commands,
                          seconds=time.perf_counter() - start,
                          metadata={"workspace": str(self.sandbox.workspace)})

    def _install(self, setup: dict[str, Any]) -> bool:
        """The repository's dependencies, installed or taken from the cache and bound into
        this sandbox; False (nothing else runs) when they cannot be."""
        if self.cache_root is None:
            self.setup = {"source": setup.get("source"), "sha256": setup.get("sha256"),
                          "installed": False, "ran": False,
                          "reason": "this sandbox keeps no dependency cache"}
            return False
        timeout = self._timeout(self.sandbox.policy.registry.max_wall_seconds)
        home = self.sandbox.home.parent / _setup_name(self.sandbox.home.name)
        installed, self.setup = dependency_setup.prepare(setup, self.sandbox.policy,
                                                         self.cache_root, home, timeout)
        if timeout is not None and self.setup.get("limit") == Reason.TIMEOUT:
            raise DeadlineReached("the wall-time cap stopped the dependency install")
        self.sandbox.dependencies = installed
        return installed is not None

    def _run(self, request: ResolveRequest) -> list[dict[str, Any]]:
        self.sandbox.workspace.mkdir(mode=0o700, parents=True, exist_ok=True)
        bad = file_names.problems(request.payload.get("files", {}))
        if bad:
            raise PermanentError(f"the files cannot be laid out: {'; '.join(bad)}",
                                 failure_mode=file_names.FAILURE_MODE)
        for relative, text in sorted(request.payload.get("files", {}).items()):
            self._write(relative, text)
        results: list[dict[str, Any]] = []
        if SETUP in request.payload and not self._install(dict(request.payload[SETUP])):
            return results
        for argv in request.payload.get("first_commands", []):
            results.append(self._command(list(argv)))
            if not results[-1]["ran"] or _stops(results[-1]):
                return results
        for argv in request.payload.get("commands", []):
            results.append(self._command(list(argv)))
            if not results[-1]["ran"]:
                return results
        tests = [str(t) for t in request.payload.get("tests", [])]
        if not tests:
            return results
        first = [str(t) for t in request.payload.get("first", [])]
        if first:
            results.append(self._tests(first))
            if _stops(results[-1]):
                return results
        results.append(self._tests(tests))
        return results

    def _command(self, argv: list[str]) -> dict[str, Any]:
        timeout = self._timeout()
        result = self._within(self.sandbox.run(CommandRequest(argv=argv, timeout=timeout)),
                              timeout)
        return {"argv": argv, **result.model_dump(mode="json")}

    def _tests(self, tests: list[str]) -> dict[str, Any]:
        timeout = self._timeout()
        result = self._within(self.sandbox.run_tests(tests, timeout), timeout)
        return {"argv": ["pytest", *tests], **result.model_dump(mode="json")}

    def _timeout(self, cap: float | None = None) -> float | None:
        """A command's wall time: the policy's (``cap``: another's), or less when the
        caller's ends sooner."""
        if self.deadline is None:
            return None
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineReached("the wall-time cap came before the command could start")
        cap = self.sandbox.policy.max_wall_seconds if cap is None else cap
        return remaining if remaining < cap else None

    @staticmethod
    def _within(result: RunResult, timeout: float | None) -> RunResult:
        """A command killed by the caller's deadline, not its own limit, is no verdict."""
        if timeout is not None and result.reason == Reason.TIMEOUT:
            raise DeadlineReached(f"the wall-time cap stopped a command after "
                                  f"{result.seconds:.1f}s")
        return result

    def _write(self, relative: str, text: str) -> None:
        target = (self.sandbox.workspace / relative).resolve()
        if self.sandbox.workspace not in target.parents:
            raise PermanentError(f"file {relative!r} would land outside the workspace",
                                 failure_mode="path_outside_workspace")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

