"""Step 6, VERIFY: one check per selected constraint; sigma_v = min over them.

* logic, ``{"check": "arith", "expr": ...}``: decided by Z3 over the facts the kernel
  knows (what it measures in the output itself: words, lines, bytes, chars; what the
  goal spent; the output's reported metrics, and the same as ``sum_``/``max_``/``min_``
  over its parts, which for a goal not yet decomposed is its own output; see
  composite.py for the check over real parts); sigma = 1.0, or CLAIM_SIGMA when a
  number it rests on is only reported by the output (a claim nobody measured);
* logic, ``{"check": "test", "tests": [...]}``: the output's code and tests run in the
  sandbox (codex-tools-0, a recorded proposal) under the kernel's own test supervisor;
  the verdicts come from its report pipe, cross-checked with the exit status, never
  from what the run printed; the constraint holds when its tests pass (all tests when
  it names none); sigma = 1.0; for a repository goal the check also names the tests the
  change impacts and carries its diagnostics (failing tests, files the edits leave
  unparseable), an error among which fails it;
* logic, ``{"check": "tool_contract"}``: a build's output is tool code that passes the
  static check and defines ``run``, or a composite plan naming registered script tools;
  decided by parsing, never by running; sigma = 1.0;
* semantic (and logic constraints with no deterministic checker, which are then
  judged and say so): one batched judgment for the whole node; sigma in [0, 1].
"""

from __future__ import annotations

import json
import math
from collections.abc import Generator, Iterable, Mapping, Sequence
from typing import Any, Protocol

from kernel.codebase import diagnostics
from kernel.core.envelopes import Check, Constraint, ConstraintType, Verification
from kernel.core.goal_node import GoalNode
from kernel.core.units import micros_to_usd, ms_to_seconds
from kernel.proposals import Proposal
from kernel.protocol import file_names
from kernel.protocol import operations as ops
from kernel.protocol.solve_models import ResolutionOutput, SemanticVerification
from kernel.solve import arith, repo_goal
from kernel.solve.effects import ModelCall, Request, Sandbox
from kernel.solve.output_view import output_view
from kernel.solve.tools import code_problems

SEMANTIC_CEILING = 0.99  # a model's judgment is below certainty, whatever it claims
CLAIM_SIGMA = 0.9  # a logic check over a number the output reports and nobody measured
# What the kernel counts in an output itself, and in its test run; a reported number of
# the same name is ignored.
MEASURED = ("words", "lines", "bytes", "chars")
COUNTED = ("tests_passed", "tests_failed", "tests_total", "test_seconds")
SPEND_FACTS = frozenset({"cost_usd", "seconds"})  # what the goal spent: never taken back
SANDBOX_ID = "resolver:codex-tools-0"  # whose spend a test run is

# A check's body: yields the calls it needs (a test run, a judgment), returns its result.
Checking = Generator[Request, Any, Any]
NOT_INSTALLED = "dependencies_not_installed"  # the failure mode of a failed dependency install
NOT_RUN = "NOT_RUN"  # a named test's status when the dependencies kept every test from running
# What a repository check keeps of its dependency install: the hash, whether the cache
# served it, and for a failed one why, pip's exit status and the end of its output.
SETUP_KEPT = ("source", "sha256", "installed", "cached")
SETUP_FAILURE_KEPT = ("reason", "exit_code", "limit", "output_tail")


class CheckReads(Protocol):
    """What verification reads of the run (``StepView`` provides it)."""

    @property
    def in_repository(self) -> bool:
        """Whether the run works on a repository (its goals are edits to it)."""
        ...

    def resolver_kind(self, resolver_id: str) -> str | None:
        """The registered resolver's kind (script, composite, model...), None if none."""
        ...

    def repo_test_inputs(self, output: ResolutionOutput
                         ) -> repo_goal.RepoRun | list[dict[str, str]]:
        """The repository test run an output's edits make, or why the edits are refused."""
        ...


def verify(view: CheckReads, goal: GoalNode, constraints: list[Constraint],
           output: ResolutionOutput) -> Generator[Request, Any, Verification]:
    """The checks of ``constraints`` on ``output`` (module doc), asking for the test run
    and the judgment they need; the verification."""
    checks: dict[str, Check] = {}
    judged: list[Constraint] = []
    arithmetic = [c for c in constraints if is_arithmetic(c)]
    tested = [c for c in constraints if method_of(c) == "tests"]
    counted: dict[str, float] = {}
    results: dict[str, Any] | None = None
    if tested:  # first: what the run counted is a fact the arithmetic may name
        ran, counted = yield from _run_tests(view, goal, tested, output)
        checks.update(ran)
        results = test_results(ran.values(), counted)
    known = {**measured_metrics(output), **counted,
             "cost_usd": micros_to_usd(goal.cost_spent),
             "seconds": ms_to_seconds(goal.time_spent)}
    facts = {**part_facts([output.metrics]), **output.metrics, **known}
    for constraint in arithmetic:
        checks[constraint.id] = claimed(arith_check(constraint, facts), set(known))
    for constraint in constraints:
        if constraint.type == ConstraintType.LOGIC and \
                constraint.payload.get("check") == "tool_contract":
            checks[constraint.id] = _contract_check(view, constraint, output)
    for constraint in constraints:
        if constraint.id not in checks:
            judged.append(constraint)
    spent = spent_past_limit([checks[c.id] for c in arithmetic])
    if judged and spent is not None:  # refused for what it spent: no judge is paid for
        checks.update({c.id: Check(constraint_id=c.id, passed=False, sigma_i=0.0, detail={
            "judge": f"not asked: the output is refused for its spending ({spent[1]})"})
            for c in judged})
    elif judged:
        checks.update((yield from _judge(goal, judged, output, results)))
    ordered = [checks[c.id] for c in sorted(constraints, key=lambda c: c.id)]
    failed = sum(1 for c in ordered if not c.passed)
    return Verification.from_checks(
        ordered, trace_summary=f"{len(ordered) - failed}/{len(ordered)} checks passed; "
                               f"distance from convergence {failed}")


def spent_past_limit(checks: Iterable[Check]) -> tuple[Check, str] | None:
    """The first failed arithmetic check violated by spending alone (what the goal spent,
    which no attempt takes back), with the figure."""
    for check in checks:
        violated = check.detail.get("violated_by") or {}
        if not check.passed and violated and set(violated) <= SPEND_FACTS:
            return check, ", ".join(f"{name} = {value}" for name, value in
                                    sorted(violated.items()))
    return None


def test_results(checks: Iterable[Check], counted: Mapping[str, float]) -> dict[str, Any]:
    """What the judge is shown of the test run: each named test's verdict, the counts,
    and why the run could not be trusted or was stopped, if it was (not how long it
    took: a prompt holds nothing a second run of the same output would change)."""
    tests: dict[str, str] = {}
    problems = set()
    for check in checks:
        tests.update(check.detail.get("tests") or {})
        if check.detail.get("report_problem"):
            problems.add(str(check.detail["report_problem"]))
    view: dict[str, Any] = {"tests": tests, **{name: int(value) for name, value in
                                               counted.items() if name != "test_seconds"}}
    if problems:
        view["problem"] = "; ".join(sorted(problems))
    return view


def method_of(constraint: Constraint) -> str:
    """How ``verify`` decides a constraint: Z3, the sandboxed tests, the tool contract,
    or the model judge (sigma < 1)."""
    if constraint.type != ConstraintType.LOGIC:
        return "judge"
    return {"arith": "z3", "test": "tests", "tool_contract": "contract"}.get(
        str(constraint.payload.get("check")), "judge")


def is_arithmetic(constraint: Constraint) -> bool:
    return constraint.type == ConstraintType.LOGIC and constraint.payload.get("check") == "arith"


def measured_metrics(output: ResolutionOutput) -> dict[str, float]:
    """What the kernel counts in an output's content."""
    text = output.content
    return {"words": float(len(text.split())), "lines": float(len(text.splitlines())),
            "bytes": float(len(text.encode())), "chars": float(len(text))}


def claimed(check: Check, known: set[str]) -> Check:
    """A check decided over a number only the output reports (not measured by the kernel,
    not spent) rests on the model's word: its sigma is CLAIM_SIGMA, and it says so."""
    used = set(check.detail.get("facts", {}))
    claims = sorted(used - known)
    if not claims:
        return check
    return check.model_copy(update={"sigma_i": min(check.sigma_i, CLAIM_SIGMA),
                                    "detail": {**check.detail, "claimed": claims}})


def part_facts(parts: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """``parts`` and, for each metric every part reports, its ``sum_``, ``max_`` and ``min_``
    (a metric some part leaves out has no total: a check naming it fails, saying so)."""
    facts: dict[str, float] = {"parts": len(parts)}
    names = set.intersection(*(set(p) for p in parts)) if parts else set()
    for name in sorted(names):
        values = [float(p[name]) for p in parts]
        facts |= {f"sum_{name}": math.fsum(values), f"max_{name}": max(values),
                  f"min_{name}": min(values)}
    return facts


def arith_check(constraint: Constraint, facts: Mapping[str, float]) -> Check:
    """Decide an arithmetic constraint with Z3; a missing fact fails it with a repair hint."""
    expression = str(constraint.payload.get("expr", ""))
    try:
        holds, detail = arith.check(expression, facts)
    except arith.ExpressionError as exc:
        return Check(constraint_id=constraint.id, passed=False, sigma_i=1.0,
                     detail={"expression": expression, "error": str(exc)},
                     repair_suggestion={"provide": "report the missing metrics in the output"})
    suggestion = None if holds else {"violated_by": detail["violated_by"]}
    return Check(constraint_id=constraint.id, passed=holds, sigma_i=1.0, detail=detail,
                 repair_suggestion=suggestion)


def _contract_check(view: CheckReads, constraint: Constraint, output: ResolutionOutput) -> Check:
    if output.format == "tool_plan":
        try:
            steps = list(json.loads(output.content)["steps"])
        except (ValueError, KeyError, TypeError):
            steps, problems = [], ["a tool_plan is JSON with a 'steps' list of resolver ids"]
        else:
            problems = [f"step {s} is not a registered script tool" for s in steps
                        if view.resolver_kind(str(s)) != "script"] or \
                ([] if steps else ["no steps"])
    else:
        problems = code_problems(output.content)
    return Check(constraint_id=constraint.id, passed=not problems, sigma_i=1.0,
                 detail={"problems": problems},
                 repair_suggestion={"fix": problems} if problems else None)


def _run_tests(view: CheckReads, goal: GoalNode, tested: list[Constraint], output: ResolutionOutput,
               ) -> Generator[Request, Any, tuple[dict[str, Check], dict[str, float]]]:
    """The test constraints' checks, and what the run counted (tests_passed,
    tests_failed, tests_total and test_seconds, from the report and the runner).
    Files an output names badly (a NUL, a name too long, a file that is also a folder)
    fail the checks with the reason; nothing runs."""
    laid_out = _workspace(view, output)
    if isinstance(laid_out, Check):
        return {c.id: laid_out.model_copy(update={"constraint_id": c.id}) for c in tested}, {}
    payload, repo_run = laid_out
    request = ops.RUN_TESTS.request(goal.id, payload=payload)
    proposal: Proposal[Any] = yield ModelCall(ops.RUN_TESTS, request, resolver_id=SANDBOX_ID,
                                              answerer=Sandbox())
    run = proposal.output
    result = run.results[-1] if run.results else {}
    verdicts, problem, mode = command_verdicts(result) if "commands" in payload else \
        report_verdicts(result)
    if run.setup is not None and not run.setup.get("installed"):
        problem, mode = (f"the repository's dependencies ({run.setup.get('source')}) could not "
                         f"be installed, so no test ran: "
                         f"{diagnostics.install_failure(run.setup)}"), NOT_INSTALLED
    checks = {c.id: _test_check(c, verdicts, problem, mode, result, every=view.in_repository)
              for c in tested}
    if repo_run is not None:
        first = _impacted_first(payload, run.results)
        checks = {i: _with_findings(c, repo_run, verdicts, result, first, run.setup)
                  for i, c in checks.items()}
    counted = {"tests_total": float(len(verdicts)),
               "tests_passed": float(sum(v == "passed" for v in verdicts.values())),
               "tests_failed": float(sum(v in ("failed", "error") for v in verdicts.values())),
               "test_seconds": float(result.get("seconds") or 0.0)}
    return checks, counted


def _test_check(constraint: Constraint, verdicts: dict[str, str], problem: str | None,
                mode: str | None, result: Mapping[str, Any], every: bool) -> Check:
    """One test constraint's check from the run's verdicts (``every``: a repository's
    suite, whose pack lists each test's verdict)."""
    wanted = [str(t) for t in constraint.payload.get("tests", [])]
    statuses = {t: _status_of(t, verdicts) for t in wanted} if wanted else \
        {"suite": "PASSED" if _all_passed(verdicts) else "FAILED"}
    if mode == NOT_INSTALLED:  # no test ran: none is missing, none could be run
        statuses = {t: NOT_RUN for t in wanted} or {"suite": "FAILED"}
    passed = problem is None and all(s == "PASSED" for s in statuses.values())
    detail: dict[str, Any] = {"tests": statuses, "exit_code": result.get("exit_code"),
                              "reason": result.get("reason")}
    if problem is not None:
        detail["report_problem"] = problem
        if mode is not None:
            detail["failure_mode"] = mode
    if every:
        detail["verdicts"] = dict(sorted(verdicts.items()))
    if not passed:
        detail["output_tail"] = str(result.get("stdout", ""))[-1500:] + \
            str(result.get("stderr", ""))[-500:]
    failing = sorted(t for t, s in statuses.items() if s != "PASSED")
    fix = "make these tests pass" if mode != NOT_INSTALLED else \
        "install the repository's dependencies first (the registry settings, the requirements)"
    return Check(constraint_id=constraint.id, passed=passed, sigma_i=1.0, detail=detail,
                 repair_suggestion=None if passed else {"fix": fix, "failing": failing})


def _impacted_first(payload: Mapping[str, Any],
                    results: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How the impacted tests' own run, the first of the request's, ended, and whether
    the whole suite ran after it (not when they failed)."""
    if not (payload.get("first") or payload.get("first_commands")) or not results:
        return None
    return {"exit_code": results[0].get("exit_code"), "suite_ran": len(results) > 1}


def _with_findings(check: Check, repo_run: repo_goal.RepoRun, verdicts: Mapping[str, str],
                   result: Mapping[str, Any], first: dict[str, Any] | None,
                   setup: dict[str, Any] | None = None) -> Check:
    """A repository test check with the tests the change impacts (and how their run,
    first, ended), its dependency install (``setup``: the requirements' hash, whether
    the cache served it) and the run's diagnostics (dependencies not installed, failing
    tests, unparseable files); an error among them fails it."""
    printed = str(result.get("stdout", ""))
    found = [*diagnostics.setup_failed(setup), *repo_run.diagnostics,
             *diagnostics.failing_tests(verdicts, printed)]
    passed = check.passed and not diagnostics.blocking(found)
    detail = {**check.detail, "impacted_tests": repo_run.impacted, "diagnostics": found}
    if first is not None:
        detail["impacted_first"] = first
    if setup is not None:
        kept = SETUP_KEPT if setup.get("installed") else SETUP_KEPT + SETUP_FAILURE_KEPT
        detail["setup"] = {k: setup[k] for k in kept if k in setup}
        if not setup.get("installed"):
            detail["setup"]["edited"] = repo_run.requirements_edited
    suggestion = check.repair_suggestion
    if check.passed and not passed:
        suggestion = {"fix": "fix these errors", "diagnostics": found}
    return check.model_copy(update={"passed": passed, "detail": detail,
                                    "repair_suggestion": suggestion})


def _workspace(view: CheckReads, output: ResolutionOutput
               ) -> tuple[dict[str, Any], repo_goal.RepoRun | None] | Check:
    """The test run's payload: the output's files and tests, or for a repository goal the
    snapshot with the output's edits applied and the repository's tests (or its test
    command). A failed check (its constraint id left blank) when nothing can run: files an
    output names badly, or edits the kernel refuses (each with its reason code)."""
    if view.in_repository:
        laid_out = view.repo_test_inputs(output)
        if isinstance(laid_out, list):
            return Check(constraint_id="", passed=False, sigma_i=1.0,
                         detail={"edits_refused": laid_out, "failure_mode": "edit_refused"},
                         repair_suggestion={"fix": "send edits the kernel can apply",
                                            "problems": laid_out})
        return laid_out.payload, laid_out
    bad_names = file_names.problems(output.workspace_files())
    if bad_names:
        return Check(constraint_id="", passed=False, sigma_i=1.0,
                     detail={"file_names": bad_names, "failure_mode": file_names.FAILURE_MODE},
                     repair_suggestion={"fix": "name every file with a plain relative path",
                                        "problems": bad_names})
    return {"files": output.workspace_files(), "tests": sorted(output.tests)}, None


def command_verdicts(result: Mapping[str, Any]) -> tuple[dict[str, str], str | None, None]:
    """A test command's one verdict, from its exit status alone (it writes no report):
    the suite passed when it ran to the end and exited 0."""
    if not result.get("ran"):
        return {}, f"the test command did not run: {result.get('reason')} " \
                   f"{result.get('detail', '')}", None
    if result.get("reason") is not None:
        return {}, f"the test command was stopped: {result.get('reason')}", None
    shown = " ".join(str(a) for a in result.get("argv", []))
    return {shown: "passed" if result.get("exit_code") == 0 else "failed"}, None, None


def report_verdicts(result: Mapping[str, Any]) -> tuple[dict[str, str], str | None, str | None]:
    """The report's verdicts and, when it cannot be trusted, why, with the failure mode
    that names a forged or missing report: none when the run was refused or stopped by a
    limit (the constraint is simply not met), ``test_report_missing`` when no readable
    report exists, ``test_report_mismatch`` when it disagrees with the exit status (0
    exactly when every collected test passed)."""
    report = result.get("report") or {}
    if not result.get("ran"):
        return {}, f"the tests did not run: {result.get('reason')} {result.get('detail', '')}", None
    if result.get("reason") is not None:
        return dict(report.get("tests", {})), \
            f"the test run was stopped: {result.get('reason')}", None
    if "tests" not in report:
        return {}, str(report.get("error") or "the test run wrote no report"), \
            "test_report_missing"
    verdicts: dict[str, str] = dict(report["tests"])
    clean = _all_passed(verdicts)
    exit_code = result.get("exit_code")
    if clean != (exit_code == 0):
        return verdicts, (f"the report and the exit status disagree (report: "
                          f"{'all passed' if clean else 'not all passed'}, exit {exit_code})"), \
            "test_report_mismatch"
    return verdicts, None, None


def _all_passed(verdicts: Mapping[str, str]) -> bool:
    """At least one test ran and none failed or errored (skips allowed), as pytest exits 0."""
    return bool(verdicts) and all(v in ("passed", "skipped") for v in verdicts.values())


def _status_of(wanted: str, verdicts: Mapping[str, str]) -> str:
    """PASSED when every test the name selects passed (parametrized cases included)."""
    chosen = [v for node, v in verdicts.items()
              if node.endswith(wanted) or node.split("[")[0].endswith("::" + wanted)]
    if not chosen:
        return "MISSING"
    return "PASSED" if all(v == "passed" for v in chosen) else "FAILED"


def _judge(goal: GoalNode, judged: list[Constraint], output: ResolutionOutput,
           results: dict[str, Any] | None) -> Generator[Request, Any, dict[str, Check]]:
    request = ops.VERIFY_SEMANTIC.request(goal.id, goal_description=goal.description,
                                          constraints=judged,
                                          payload={"goal_summary": goal.summary,
                                                   "output": output_view(output),
                                                   "test_results": results})
    judgment_of: Proposal[SemanticVerification] = yield ModelCall(ops.VERIFY_SEMANTIC, request)
    verdicts = judgment_of.output
    by_name = {c.constraint_id: c for c in verdicts.checks}  # an id, or the exact title
    checks = {}
    for constraint in judged:
        judgment = by_name.get(constraint.id) or by_name.get(constraint.title)
        fallback = constraint.type == ConstraintType.LOGIC
        if judgment is None:  # the judge skipped it: the kernel does not assume it holds
            checks[constraint.id] = Check(constraint_id=constraint.id, passed=False, sigma_i=0.0,
                                          detail={"judge": "no judgment returned"})
            continue
        detail: dict[str, Any] = {"rubric_trace": judgment.rubric_trace}
        if fallback:
            detail["note"] = "logic constraint without a deterministic checker; judged instead"
        sigma = min(judgment.sigma, SEMANTIC_CEILING)
        if sigma < judgment.sigma:  # a judgment is never certainty: said, not hidden
            detail["sigma_capped_from"] = judgment.sigma
        checks[constraint.id] = Check(
            constraint_id=constraint.id, passed=judgment.passed, sigma_i=sigma,
            detail=detail,
            repair_suggestion={"fix": judgment.repair_suggestion} if judgment.repair_suggestion
            else None)
    return checks
