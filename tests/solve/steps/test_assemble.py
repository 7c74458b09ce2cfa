"""Step 13 driven without a store: the assembly asked for over the leaves' outputs, the
whole verified (its tests run in the sandbox), the final artifact registered before the
root's move names it, and a failing assembly asked again once, then the root refused."""

from __future__ import annotations

from typing import Any

from kernel.core.envelopes import Lineage
from kernel.core.goal_node import GoalChanges
from kernel.core.state_machine import Status
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.runtime.gate import CLAUDE_ID
from kernel.solve import moves
from kernel.solve.effects import (
    Flow,
    ModelCall,
    NewArtifact,
    RefuseGoal,
    Register,
    Sandbox,
    Transition,
    UpdateGoal,
    Wake,
)
from kernel.solve.steps.assemble import FILE_RULE, assemble
from tests.solve.steps.fakes import FakeView, constraint, drive, goal, proposal

TESTED = constraint("c:tests", "tests pass", type="logic",
                    payload={"check": "test", "tests": ["test_add"]})
JUDGED = constraint("c:judged", "reads well")
PARSE = models.ResolutionOutput(artifact_type="code", format="python", content="def parse(): ...",
                                tests={"test_main.py": "def test_add(): ..."})
SUM = models.ResolutionOutput(artifact_type="code", format="python", content="def add(): ...")
WHOLE = models.Assembly(content="def parse(): ...\ndef add(): ...", format="python",
                        notes="parse, then add")


def _view(**fields: Any) -> FakeView:
    root = goal("goal:root", parent_id=None, depth=0, status=Status.PENDING, **fields)
    parse = goal("goal:p", output_artifact_id="art:p", summary="parse")
    add = goal("goal:s", output_artifact_id="art:s", summary="sum")
    return FakeView(
        goals={g.id: g for g in (root, parse, add)},
        role_ids={"goal:root": {"selected": ["c:judged"]}, "goal:p": {"selected": ["c:tests"]}},
        known={c.id: c for c in (TESTED, JUDGED)}, resolutions={"art:p": PARSE, "art:s": SUM},
        live_leaves=["goal:p", "goal:s"], least_sigma=0.9,
        below={"goal:root": [{"id": "goal:root", "parent_id": None, "purpose": "solve", "stale": False},
                             {"id": "goal:p", "parent_id": "goal:root", "purpose": "solve", "stale": False},
                             {"id": "goal:s", "parent_id": "goal:root", "purpose": "solve", "stale": False}]})


def _ran(passed: bool) -> Any:
    return proposal(models.SandboxRun(passed=passed, results=[{
        "ran": True, "exit_code": 0 if passed else 1, "reason": None, "seconds": 0.5,
        "report": {"tests": {"test_main.py::test_add": "passed" if passed else "failed"}},
        "stdout": "", "stderr": ""}]))


class _Registered:
    id = "art:final"


def test_the_whole_is_asked_for_verified_and_registered_before_the_root_resolves_naming_it() -> None:
    view = _view()
    root = view.goal("goal:root")
    asked, done = drive(assemble(view, moves.Assemble(root)),
                        [proposal(WHOLE), _ran(True), _Registered()])
    call, run, register = asked
    assert isinstance(call, ModelCall) and call.operation is ops.ASSEMBLE and call.pay
    assert call.answerer is None and call.request.feedback is None
    # the root's judged constraint is left to its parts; a leaf's tests run on the whole
    assert [c.id for c in call.request.constraints] == ["c:tests"]
    assert [p["goal_id"] for p in call.request.payload["parts"]] == ["goal:p", "goal:s"]
    assert call.request.payload["file_rule"] == FILE_RULE
    assert isinstance(run, ModelCall) and run.answerer == Sandbox()
    assert run.request.payload["files"]["main.py"] == WHOLE.content
    assert isinstance(register, Register)
    final = models.ResolutionOutput(artifact_type="final", format="python",
                                    content=WHOLE.content, tests=PARSE.tests)
    assert register.artifact == NewArtifact(
        "goal:root", final.model_dump_json(), "final", "json",
        Lineage(node_id="goal:root", resolver_id=CLAUDE_ID, input_artifact_ids=["art:p", "art:s"]),
        key=f"final:{'0' * 64}",
        metadata=(("content_format", "python"), ("sigma_system", 0.9),
                  ("leaves", ["goal:p", "goal:s"]), ("notes", "parse, then add")), sigma=0.9)
    assert done.then == []
    assert done.changes.changes == (
        Flow("goal:root", "goal achieved: final artifact art:final from 2 parts, "
                          "sigma_system=0.9"),
        Wake(()),
        Transition("goal:root", Status.RESOLVED, GoalChanges(
            leaf_kind=None, final_artifact_id="art:final", sigma_system=0.9)))


def test_a_whole_that_fails_its_tests_is_asked_again_with_the_trace_then_the_root_refused() -> None:
    view = _view()
    root = view.goal("goal:root")
    asked, done = drive(assemble(view, moves.Assemble(root)), [proposal(WHOLE), _ran(False)])
    assert len(asked) == 2 and done.then == ["goal:root"]
    said, wake, update = done.changes.changes
    assert said == Flow("goal:root", "the assembly violates c:tests: assembling again (2/2)")
    assert wake == Wake(("goal:root",))
    assert isinstance(update, UpdateGoal) and update.status is Status.PENDING
    assert update.changes.feedback is not None
    tried = update.changes.feedback["assembly"]
    assert tried["attempt"] == 1 and tried["violations"][0]["constraint_id"] == "c:tests"
    again = _view(feedback=update.changes.feedback)
    asked, done = drive(assemble(again, moves.Assemble(again.goal("goal:root"))),
                        [proposal(WHOLE), _ran(False)])
    call = asked[0]
    assert isinstance(call, ModelCall) and call.request.feedback == tried
    assert done.then == []
    [refused] = done.changes.changes
    assert isinstance(refused, RefuseGoal)
    assert refused.reason is RefusalReason.ASSEMBLY_VIOLATES_CONSTRAINTS
    assert refused.facts == (("constraints", "c:tests"), ("attempts", "2"))
    assert refused.detail.startswith("2 assemblies violate c:tests: ")


def test_an_empty_whole_is_refused_unverified_and_without_constraints_nothing_is_run() -> None:
    view = _view()
    root = view.goal("goal:root")
    empty = WHOLE.model_copy(update={"content": "  "})
    asked, done = drive(assemble(view, moves.Assemble(root)), [proposal(empty)])
    assert len(asked) == 1
    said = done.changes.changes[0]
    assert isinstance(said, Flow) and "violates assembly" in said.text
    view.role_ids = {}
    view.least_sigma = None
    asked, done = drive(assemble(view, moves.Assemble(root)), [proposal(WHOLE), _Registered()])
    call, register = asked
    assert isinstance(call, ModelCall) and call.request.constraints == []
    assert isinstance(register, Register) and register.artifact.sigma is None
    assert done.changes.changes[0] == Flow(
        "goal:root", "goal achieved: final artifact art:final from 2 parts, sigma_system=None")


def test_the_root_s_own_output_and_tests_are_shown_and_kept_first() -> None:
    view = _view(output_artifact_id="art:root")
    view.resolutions["art:root"] = models.ResolutionOutput(
        artifact_type="code", format="python", content="main", tests={"test_main.py": "root"})
    view.outputs["art:root"] = {"content": "main"}
    asked, _ = drive(assemble(view, moves.Assemble(view.goal("goal:root"))),
                     [proposal(WHOLE), _ran(True), _Registered()])
    call, _, register = asked
    assert isinstance(call, ModelCall) and call.request.payload["output"] == {"content": "main"}
    assert isinstance(register, Register)
    kept = models.ResolutionOutput.model_validate_json(register.artifact.content)
    # two sources name test_main.py differently: each kept under its own name
    assert kept.tests == {"test_main__root.py": "root",
                          "test_main__parse.py": "def test_add(): ..."}
