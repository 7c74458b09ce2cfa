"""What a step shows the model, made from the graph.

A prompt is only as good as its inputs: an output is shown as its text (code as code),
a dependency's output by content, cut at ``EXCERPT_CHARS`` with a pointer to the whole,
and code is asked for under the sandbox's own contract (what runs, how tests import it,
what is installed). Everything here is deterministic in the stored graph and the
policy, so a resumed or replayed run shows the model the same prompt.
"""

from __future__ import annotations

import re
from typing import Any

from kernel.core.artifacts import Artifacts
from kernel.core.constraints import ConstraintEngine
from kernel.core.envelopes import Attempt, Constraint
from kernel.core.goal_node import GoalNode
from kernel.protocol.resolver_set import SandboxPolicy
from kernel.protocol.solve_models import ResolutionOutput
from kernel.repositories import goals
from kernel.solve.output_view import output_view
from kernel.solve.verification import COUNTED, MEASURED, is_arithmetic, method_of
from kernel.store.base import GraphStore


def stored_output(artifacts: Artifacts, artifact_id: str | None) -> dict[str, Any] | None:
    """The view of a stored output artifact (None: the goal has none yet)."""
    if artifact_id is None:
        return None
    output = ResolutionOutput.model_validate_json(artifacts.read(artifact_id))
    return output_view(output, artifact_id)


def last_output(artifacts: Artifacts, history: list[Attempt]) -> dict[str, Any] | None:
    """The output of the latest of ``history``'s attempts that produced one and was
    verified (what the feedback on it is about), with its verdict; None when there is
    none (a first attempt)."""
    done = [a for a in history if a.output_artifact_id and a.verdict is not None]
    if not done:
        return None
    attempt = done[-1]
    return {"attempt": attempt.attempt_index, "verdict": attempt.verdict,
            "output": stored_output(artifacts, attempt.output_artifact_id)}


def dependency_inputs(store: GraphStore, artifacts: Artifacts, goal: GoalNode,
                      ) -> list[dict[str, Any]]:
    """What the goals ``goal`` depends on ship, in their order, by content: a decomposed
    dependency's parts (the outputs of the leaves it was made of, each named), never
    the output it had before it was split."""
    inputs = []
    for row in goals.dependency_outputs(store, goal.id):
        if row["artifact_id"] is None:
            continue
        view = stored_output(artifacts, row["artifact_id"])
        part = ({} if row["part_id"] == row["id"] else
                {"part": {"goal": row["part_id"], "summary": row["part_summary"]}})
        inputs.append({"from_goal": row["id"], "summary": row["summary"], **part,
                       "artifact_id": row["artifact_id"], "output": view})
    return inputs


REPO_LAYOUT = [
    "- Edits (format edits): `content` is the JSON list the repository section's edit "
    "contract describes; the repository's text files, with the edits applied, are laid "
    "out in the sandbox, its top directory on the import path.",
    "- The repository's test files (test_*.py, *_test.py) run with pytest under the "
    "kernel's own configuration: its conftest.py, pytest.ini and pyproject.toml are not "
    "read. Add or change tests with edits like any other file.",
]
CODE_LAYOUT = [
    "- Code (format python): `content` is saved as main.py; other files go in `files` "
    "(relative paths); test files go in `tests`, named test_*.py, beside main.py.",
    "- Tests run with pytest in that directory and import the code as a module: "
    "`import main` or `from main import ...`. Calling main() must not exit the "
    "interpreter unless a test expects SystemExit.",
]
RUN_METHODS = ("tests", "contract")  # the checks that run or parse the output as code


def is_document(goal: GoalNode, constraints: list[Constraint]) -> bool:
    """A goal whose output nothing runs: none of ``constraints`` (those it is verified
    against) is decided by running tests or by the tool check, it is no build of a tool,
    and nobody said its parts produce code. Its output is read and measured as text."""
    if goal.purpose == "build" or goal.modality == "code":
        return False
    return not any(method_of(c) in RUN_METHODS for c in constraints)


def sandbox_limits(policy: SandboxPolicy) -> list[str]:
    """What code run here may use: packages, network, time, memory, processes, disk."""
    packages = ", ".join(policy.python_packages) or "nothing"
    network = (f"only to {', '.join(policy.network_hosts)}" if policy.network_hosts
               else "none: no request leaves the sandbox")
    return [
        f"- Installed: the Python 3 standard library and {packages}; nothing else imports.",
        f"- Network: {network}.",
        f"- Limits per test run: {policy.max_wall_seconds:g} s wall, "
        f"{policy.max_memory_bytes >> 20} MiB memory, {policy.max_processes} processes.",
        f"- Disk: {policy.max_workspace_bytes >> 20} MiB and {policy.max_workspace_files} files "
        f"in the working directory, {policy.max_file_bytes >> 20} MiB per file, "
        f"{policy.max_tmp_bytes >> 20} MiB in /tmp; nothing outside them is written.",
    ]


def sandbox_contract(policy: SandboxPolicy, constraints: list[Constraint],
                     dependencies: bool = False, document: bool = False,
                     repository: bool = False) -> str:
    """How the output is checked, in the terms the checks use; with ``dependencies``,
    that what other goals produced reaches this one only as the text shown; a
    ``document`` (see ``is_document``) is asked for as text, with nothing run; with
    ``repository``, that the output edits a repository whose own tests run."""
    metrics = sorted({str(c.payload.get("expr")) for c in constraints if is_arithmetic(c)})
    lines = _document_lines() if document and not repository else \
        _code_lines(policy, constraints, repository)
    if dependencies:
        lines.append("- The inputs from other goals are shown as text only: their files are "
                     "not in the sandbox and their modules cannot be imported; put what you "
                     "use of them in this output.")
    if metrics:
        lines.append(f"- Decided exactly over the metrics: {'; '.join(metrics)}.")
    return "\n".join(lines)


def _document_lines() -> list[str]:
    return [
        "- A document (format markdown, text, csv, ...): `content` is the document itself, "
        "as a person reads it; other documents go in `files` (relative paths).",
        "- Nothing is run: no constraint here is decided by tests, so give no `tests`; "
        "code written into the document is read, not run.",
        f"- The kernel measures {', '.join(MEASURED)} of `content` itself; report in "
        "`metrics` only other numbers, which are judged as claims.",
    ]


def _named_tests(tests: list[str], repository: bool) -> str:
    if repository:
        return (f"the repository's tests named exactly {', '.join(tests)}, and its whole "
                "suite for a constraint naming none.") if tests else \
            "a constraint naming none holds when the repository's whole suite passes."
    return f"define tests named exactly {', '.join(tests)}." if tests else \
        "none is selected here."


def _code_lines(policy: SandboxPolicy, constraints: list[Constraint],
                repository: bool) -> list[str]:
    tests = sorted({str(t) for c in constraints if method_of(c) == "tests"
                    for t in c.payload.get("tests", [])})
    return [
        *(REPO_LAYOUT if repository else CODE_LAYOUT),
        *sandbox_limits(policy),
        "- A test constraint holds when every test it names passes: "
        + _named_tests(tests, repository),
        f"- The kernel measures {', '.join(MEASURED)} of `content`, and {', '.join(COUNTED)} "
        "of the test run, itself; report in `metrics` only other numbers, which are "
        "judged as claims.",
    ]


def inherited_view(constraints: ConstraintEngine, goal: GoalNode) -> dict[str, Any] | None:
    """The constraints of the goals above that a part works under: those it answers for
    (its parent's decomposition gave them to it, and it is verified against them) with
    what each requires of its output, and those it may rely on, with who answers for
    each (another part, the whole, or a goal further up). None for a root."""
    roles = constraints.roles(goal.id)
    owed = set(roles["owed"])
    shown = set(roles["inherited"]) | owed
    if not shown:
        return None
    parent, answered = constraints.answered_by(goal.id)
    view: dict[str, Any] = {}
    above = constraints.get_many(shown)
    answers_for = [{**_constraint_line(c), "requires": _requires(c, own=True),
                    "from": parent} for c in above if c.id in owed]
    relies_on = [{**_constraint_line(c), "requires": _requires(c, own=False),
                  "answered_by": _answered_by(answered.get(c.id), goal.id)}
                 for c in above if c.id not in owed]
    if answers_for:
        view["answers_for"] = answers_for
    if relies_on:
        view["relies_on"] = relies_on
    return view


def _constraint_line(c: Constraint) -> dict[str, Any]:
    return {"constraint": c.id, "title": c.title, "type": f"{c.type.value}/{c.domain}"}


def _requires(c: Constraint, own: bool) -> str:
    """What a constraint asks of an output, in the terms its check uses."""
    method = method_of(c)
    if method == "tests":
        tests = [str(t) for t in c.payload.get("tests", [])]
        named = ", ".join(tests) if tests else "every test"
        return (f"define the tests {named} in this output's tests; they must pass" if own
                else f"the tests {named} pass")
    if method == "z3":
        expr = str(c.payload.get("expr"))
        return (_relied_on_expression(expr) if not own else None) or \
            f"{expr} (decided exactly over the metrics)"
    if method == "contract":
        return "a tool that passes the static check and defines run"
    rubric = c.payload.get("rubric")
    return f"judged: {rubric}" if rubric else f"judged: {c.title}"


def _relied_on_expression(expr: str) -> str | None:
    """How an expression another part or the whole answers for still involves this part:
    a total or bound over the parts' figures counts this part's own, and the spending of
    a decomposed goal is its whole subtree's (see composite.py). None when it does not."""
    shared = _shared_figures(expr)
    if shared:
        bound = ("it is one term of the sum, so keep it within a share of the limit "
                 "(no part alone may pass it)" if "sum_" in expr else
                 "the bound holds of each figure, so this part must meet it too")
        return (f"{expr}, decided over the figures the parts report once the whole is "
                f"assembled. Report the {', '.join(shared)} of this part in metrics; {bound}")
    spent = sorted(set(re.findall(r"\b(cost_usd|seconds)\b", expr)))
    if spent:
        return (f"{expr}, decided over what the goal and every part below it spent once "
                f"the parts resolve; what this part spends ({', '.join(spent)}) counts "
                f"toward it, so keep it within a share of the limit")
    return None


def _shared_figures(expr: str) -> list[str]:
    """The metrics ``expr`` totals or bounds over a goal's parts (``sum_M``, ``max_M``,
    ``min_M``): each part's own ``M`` is one of the figures it is decided over."""
    return sorted(set(re.findall(r"\b(?:sum|max|min)_([A-Za-z_][A-Za-z0-9_]*)", expr)))


def _answered_by(parts: list[tuple[str, str]] | None, goal_id: str) -> str:
    if parts is None:
        return "a goal further up the tree"
    others = [summary for part_id, summary in parts if part_id != goal_id]
    if others:
        return "another part: " + ", ".join(others)
    return "the whole: the assembly, or the parts added up"
