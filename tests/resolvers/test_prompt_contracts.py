"""Prompt contracts: every model operation's prompt shows each input its step gives.

The contract is ``Operation.inputs``; the template names each one (``$name``), the request
must carry exactly those, and the shipped examples' rendered prompts are reviewed golden
files (tests/golden/prompts/), one per operation shown in docs/prompts.md. Set
KERNEL_GOLDEN_UPDATE=1 to write them again, then read the diff."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from kernel.bench.examples import EXAMPLES, EXAMPLES_DIR
from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.plan.session import plan_goal
from kernel.protocol import Resolution, ResolveRequest
from kernel.protocol import operations as ops
from kernel.protocol.operations import MODEL_OPERATIONS, STANDARD_INPUTS
from kernel.solve.constraint_text import parse_constraint
from kernel.solve.dispatch import solve
from kernel.solve.prompt_inputs import sandbox_contract
from kernel.store.base import GraphStore
from resolvers.claude.adapter import render_prompt, render_value, template_inputs
from resolvers.sandbox.policy import Constitution
from resolvers.sandbox.runner import default_workspace_root
from resolvers.scripted import ScriptedProposer
from tests.sandbox_support import needs_sandbox
from tests.solve.test_tool_plans import GOAL as TWO_STEP_GOAL
from tests.solve.test_tool_plans import two_step_script
from tests.starting import start

GOLDEN = Path(__file__).parents[1] / "golden" / "prompts"
DOC = Path(__file__).parents[2] / "docs" / "prompts.md"
UPDATE = bool(os.environ.get("KERNEL_GOLDEN_UPDATE"))


@pytest.mark.parametrize("name", sorted(MODEL_OPERATIONS))
def test_a_template_shows_exactly_its_operation_s_inputs(name: str) -> None:
    inputs = set(MODEL_OPERATIONS[name].inputs or ()) | set(MODEL_OPERATIONS[name].optional)
    shown = template_inputs(name)
    assert inputs <= shown, f"{name}: the prompt does not show {sorted(inputs - shown)}"
    assert shown <= inputs | set(STANDARD_INPUTS), sorted(shown - inputs - set(STANDARD_INPUTS))
    assert "goal" in shown


def test_a_request_without_an_input_of_the_contract_is_a_kernel_bug() -> None:
    with pytest.raises(ValueError, match="prompt contract"):
        ops.RESOLVE.request("goal:x", payload={"inputs": []})
    with pytest.raises(ValueError, match="prompt contract"):
        ops.CLASSIFY_LEAF.request("goal:x", payload={"output": {}, "stray": 1})


def test_a_resolve_prompt_with_inputs_says_their_modules_cannot_be_imported() -> None:
    policy = Constitution()
    alone = sandbox_contract(policy, [])
    fed = sandbox_contract(policy, [], dependencies=True)
    assert "cannot be imported" in fed and "cannot be imported" not in alone
    assert "no request leaves the sandbox" in fed


def test_an_input_is_rendered_readably() -> None:
    assert render_value(None) == render_value([]) == "(none)"
    code = render_value({"content": "def f():\n    return 1\n"})
    assert "  def f():\n      return 1" in code  # a literal block, not an escaped string


class _Recording(ScriptedProposer):
    requests: list[ResolveRequest]

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        self.requests.append(request)
        return super().propose(request, occurrence)


def _recording(script: Path) -> _Recording:
    proposer = _Recording.from_file(script)
    assert isinstance(proposer, _Recording)
    proposer.requests = []
    return proposer


def _run_example(store: GraphStore, tmp_path: Path, name: str) -> list[ResolveRequest]:
    """The model's requests of a shipped example: the solve examples as `kernel bench`
    runs them, the intake example, one flywheel goal (gap detection) and a plan."""
    if name == "momentum-strategy":
        proposer = _recording(EXAMPLES_DIR / f"{name}.plan.yaml")
        assert proposer.script.example is not None
        plan_goal(store, tmp_path, proposer.script.example.goal, proposer,
                  {"proposer": "scripted"}, 5.0, 3600)
        return proposer.requests
    if name == "flywheel":
        proposer = _recording(EXAMPLES_DIR / "flywheel" / "script.yaml")
        goal, core = "Fetch the EUR to USD exchange rate", [ConstraintSpec(
            type="logic", domain="data", title="reports a positive rate",
            payload={"check": "arith", "expr": "rate > 0"},
            provenance=Provenance(source="human"))]  # as seeds/examples/flywheel/goals.yaml
        kernel, root = start(store, goal, core, 3.0, 600, proposer, tmp_path,
                             default_workspace_root(), max_attempts=2)
        solve(kernel, root)  # parks on a person for the missing capability
        return [r for r in proposer.requests if r.operation in MODEL_OPERATIONS]
    if name == "two-step-plan":  # a ranking between tools, and a plan of two steps
        proposer = _recording(two_step_script(store, tmp_path))
        goal, core, budget, extra = TWO_STEP_GOAL, [], 2.0, {}
    elif name == "intake":
        proposer = _recording(EXAMPLES_DIR / "intake.script.yaml")
        goal, core, budget, extra = "fix the auth thing", [], 5.0, {"intake": True}
    else:
        example = next(e for e in EXAMPLES if e.name == name)
        proposer = _recording(EXAMPLES_DIR / f"{name}.script.yaml")
        args = list(example.args)
        core = [parse_constraint(args[i + 1]) for i, a in enumerate(args) if a == "-c"]
        budget = float(args[args.index("--budget") + 1]) if "--budget" in args else 5.0
        goal, extra = example.goal, {}
    kernel, root = start(store, goal, core, budget, 900, proposer, tmp_path,
                         default_workspace_root(), extra=extra)
    assert solve(kernel, root).status == "resolved"
    return [r for r in proposer.requests if r.operation in MODEL_OPERATIONS]


def _stable(text: str) -> str:
    """Ids minted per run and measured times, replaced so a prompt is comparable. A
    test run's output tail is its last characters, so the time it prints ("in 9.87s",
    "in 10.02s") moves where the tail starts: its first, cut line is left out."""
    text = re.sub(r"\b[0-9A-HJKMNP-TV-Z]{26}\b", "<ULID>", text)
    text = re.sub(r"\b0x[0-9a-f]{6,}\b", "<ADDRESS>", text)
    text = re.sub(r"(output_tail: \|\n( +))[^\n]*\n", r"\1<cut>\n", text)
    return re.sub(r"\d+\.\d+s\b", "<T>s", text)


def _check_contract(request: ResolveRequest, prompt: str) -> None:
    for name in MODEL_OPERATIONS[request.operation].inputs or ():
        assert render_value(request.payload.get(name)) in prompt, (request.operation, name)
    assert request.goal_description in prompt
    for constraint in request.constraints:
        assert constraint.id in prompt and constraint.title in prompt
    if request.feedback:
        assert render_value(request.feedback) in prompt
    assert "$" not in re.sub(r"\$\d", "", prompt.replace("$$", "")), "a placeholder was left"


@pytest.mark.slow
@needs_sandbox
@pytest.mark.parametrize("name", ["csv-cli", "ingest-pipeline", "intake", "flywheel",
                                  "momentum-strategy", "two-step-plan"])
def test_a_shipped_example_s_prompts_carry_their_inputs_and_match_the_reviewed_files(
        name: str, initialised_graph: GraphStore, tmp_path: Path) -> None:
    requests = _run_example(initialised_graph, tmp_path, name)
    prompts = []
    for number, request in enumerate(requests, 1):
        prompt = render_prompt(request)
        _check_contract(request, prompt)
        prompts.append((f"{number:02d}-{request.operation}.md", _stable(prompt) + "\n"))
    folder = GOLDEN / name
    if UPDATE:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.md"):
            old.unlink()
        for file, text in prompts:
            (folder / file).write_text(text)
    assert [f for f, _ in prompts] == sorted(p.name for p in folder.glob("*.md"))
    for file, text in prompts:
        assert (folder / file).read_text() == text, f"{name}/{file} changed"


def _doc() -> str:
    """docs/prompts.md: the first prompt of each operation in the examples' golden files."""
    seen: dict[str, tuple[str, str]] = {}
    for path in sorted(GOLDEN.glob("*/*.md")):
        operation = path.stem.split("-", 1)[1]
        seen.setdefault(operation, (path.parent.name, path.read_text()))
    parts = ["# What the model is shown\n",
             "Each model operation's prompt, rendered from a shipped example's run (the\n"
             "reviewed golden files in tests/golden/prompts/, ids shown as <ULID>). The\n"
             "system prompt is resolvers/claude/prompts/system.md; the answer is forced\n"
             "through one tool whose schema is the operation's output model.\n"]
    for operation, (example, text) in sorted(seen.items()):
        parts.append(f"\n## {operation} (from {example})\n\n````text\n{text}````\n")
    return "".join(parts)


def test_the_prompts_doc_shows_the_reviewed_prompts() -> None:
    if UPDATE:
        DOC.write_text(_doc())
    assert DOC.read_text() == _doc()
