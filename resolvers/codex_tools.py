"""``codex-tools-0``: runs commands and tests in a sandboxed workspace.

Every command goes through the Constitution first; a refused command returns its reason
code and never runs. Files to write into the workspace come with the request, so the
resolver never needs a shell. Test files named under ``tests`` run with the kernel's own
pytest launcher, and their verdicts come from its report. The workspace is removed once
the request is answered: what it produced is in the result.
"""

from __future__ import annotations

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
from kernel.protocol.resolver_ids import CODEX_ID
from resolvers.sandbox import CommandRequest, Constitution, Reason, RunResult, Sandbox
from resolvers.sandbox.runner import isolation_problem

RESOLVER_ID = CODEX_ID
COST_PER_INVOCATION = 0.01  # USD per command, unless the run sets its own (sandbox_run_usd)


class CodexTools:
    """payload: ``{"files": {relative path: text}, "commands": [argv, ...],
    "tests": [test file, ...]}`` (commands run first, then the tests, if any)."""

    id = RESOLVER_ID

    def __init__(self, workspace: Path, policy: Constitution | None = None,
                 deadline: float | None = None,
                 cost_per_command: float = COST_PER_INVOCATION) -> None:
        self.sandbox = Sandbox(workspace, policy)
        self.deadline = deadline  # time.monotonic() at which the caller's wall time ends
        self.cost_per_command = cost_per_command

    def estimate_cost_time(self, request: ResolveRequest) -> Estimate:
        commands = request.payload.get("commands", [])
        return Estimate(cost_usd=self.cost_per_command * max(len(commands), 1),
                        seconds=self.sandbox.policy.max_wall_seconds * max(len(commands), 1))

    def resolve(self, request: ResolveRequest) -> Resolution:
        """Raises EnvironmentFault, before anything runs, when the sandbox cannot isolate
        a command here: a refusal for that reason would blame the code under test."""
        problem = isolation_problem()
        if problem is not None:
            raise EnvironmentFault(f"the sandbox is unavailable: {problem}")
        start = time.perf_counter()
        try:
            results = self._run(request)
        finally:
            self.sandbox.remove()
        commands = max(len(results), 1)
        return Resolution(
            output={"results": results, "passed": all(r["ran"] and r["reason"] is None
                                                      and r["exit_code"] == 0 for r in results)},
            cost_usd=self.cost_per_command * commands, seconds=time.perf_counter() - start,
            metadata={"workspace": str(self.sandbox.workspace)})

    def _run(self, request: ResolveRequest) -> list[dict[str, Any]]:
        self.sandbox.workspace.mkdir(mode=0o700, parents=True, exist_ok=True)
        bad = file_names.problems(request.payload.get("files", {}))
        if bad:
            raise PermanentError(f"the files cannot be laid out: {'; '.join(bad)}",
                                 failure_mode=file_names.FAILURE_MODE)
        for relative, text in sorted(request.payload.get("files", {}).items()):
            self._write(relative, text)
        results = []
        for argv in request.payload.get("commands", []):
            timeout = self._timeout()
            result = self._within(self.sandbox.run(CommandRequest(argv=list(argv),
                                                                  timeout=timeout)), timeout)
            results.append({"argv": list(argv), **result.model_dump(mode="json")})
            if not result.ran:
                return results
        tests = [str(t) for t in request.payload.get("tests", [])]
        if tests:
            timeout = self._timeout()
            result = self._within(self.sandbox.run_tests(tests, timeout), timeout)
            results.append({"argv": ["pytest", *tests], **result.model_dump(mode="json")})
        return results

    def _timeout(self) -> float | None:
        """A command's wall time: the policy's, or less when the caller's ends sooner."""
        if self.deadline is None:
            return None
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineReached("the wall-time cap came before the command could start")
        cap = self.sandbox.policy.max_wall_seconds
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

