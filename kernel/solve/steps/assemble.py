"""Step 13, assembly: the final artifact of a run, with full lineage and sigma_system.

sigma_system is the minimum path confidence over the live leaves (each leaf's path
confidence is the product of sigma_v from the root down). A root that is itself a leaf
is its own final artifact (no call); otherwise the leaves' outputs, in creation order,
go to one ``assemble`` proposal, the result is verified against the root's selected
constraints and every leaf's test constraints (every part's tests run on the assembled
code, kept under their own names or namespaced by part), and only then
registered as derived from all of them.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

from kernel.core.envelopes import Artifact, Constraint, Lineage
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.state_machine import Status
from kernel.proposals import Proposal
from kernel.protocol import operations as ops
from kernel.protocol import solve_models as models
from kernel.refusal import RefusalReason
from kernel.runtime.gate import CLAUDE_ID
from kernel.solve import assembly_files, composite, moves, verification
from kernel.solve.assembly_files import tag_of
from kernel.solve.effects import (
    Done,
    Effects,
    Flow,
    ModelCall,
    NewArtifact,
    RefuseGoal,
    Register,
    Request,
    StepChanges,
    Transition,
    UpdateGoal,
    Wake,
)
from kernel.solve.view import StepView

S = Status


ASSEMBLIES = 2  # an assembly that fails the root's constraints is tried once more


def assemble(view: StepView, move: moves.Assemble) -> Effects[list[str]]:
    """Proposal `assemble` over the leaves' outputs (their files and tests, the root's own
    output and tests, the rule on file names); every part's tests and files are kept,
    namespaced where names clash (two parts giving one other file differently is
    refused with both names); the whole is verified against the root's test constraints
    and tool contract and the test constraints of every live goal below it (a middle
    layer's included) and must not be empty; a failing one is asked again once with
    the trace, then the root is refused (`ASSEMBLY_VIOLATES_CONSTRAINTS`); the final
    artifact keeps every file, derives from every leaf output and carries σ_system (a
    leaf root is its own final artifact, no call)."""
    root = move.goal
    sigma = view.system_sigma()
    parts, sources = _parts(view)
    if root.output_artifact_id:
        sources.insert(0, ("root", view.resolution(root.output_artifact_id)))
    constraints = _checked_on_the_whole(view, root.id, [p["goal_id"] for p in parts])
    tried = (root.feedback or {}).get("assembly", {})
    request = ops.ASSEMBLE.request(
        goal_id=root.id, goal_description=root.description, constraints=constraints,
        feedback=tried or None,
        payload={"goal_summary": root.summary, "parts": parts,
                 "output": view.stored_output(root.output_artifact_id),
                 "file_rule": FILE_RULE})
    proposal: Proposal[models.Assembly] = yield ModelCall(ops.ASSEMBLE, request)
    assembly = proposal.output
    attempt = int(tried.get("attempt", 0)) + 1
    whole, clash = assembled_output(assembly, sources)
    if clash is not None:
        return _refused(root, [_problem(clash)], attempt)
    if not (whole.content.strip() or any(t.strip() for t in whole.files.values())):
        return _refused(root, [_problem("the assembled deliverable is empty")], attempt)
    verdict = (yield from verification.verify(view, root, constraints, whole)) \
        if constraints else None
    if verdict is not None and verdict.verdict != "SAT":
        return _refused(root, [c.model_dump(mode="json") for c in verdict.failed()], attempt)
    if verdict is not None:
        sigma = verdict.sigma_v if sigma is None else min(sigma, verdict.sigma_v)
    artifact = yield from _final(root, whole, assembly, parts, sigma, proposal.ledger_hash)
    # the log line, the queue after the run's last step and the spend ride its commit
    return Done([], StepChanges((
        Flow(root.id, f"goal achieved: final artifact {artifact.id} from "
                      f"{len(parts)} parts, sigma_system={sigma}"),
        Wake(()),
        Transition(root.id, S.RESOLVED, GoalChanges(
            leaf_kind=None, final_artifact_id=artifact.id, sigma_system=sigma)))))


def _final(root: GoalNode, whole: models.ResolutionOutput, assembly: models.Assembly,
           parts: list[dict[str, Any]], sigma: float | None, ledger_hash: str,
           ) -> Generator[Request, Any, Artifact]:
    """The final artifact, registered (its id named by the log line and the root's move;
    it rides their commit): derived from every leaf output, carrying sigma_system."""
    artifact: Artifact = yield Register(NewArtifact(
        root.id, whole.model_dump_json(), "final", "json",
        Lineage(node_id=root.id, resolver_id=CLAUDE_ID,
                input_artifact_ids=[p["artifact_id"] for p in parts]),
        key=f"final:{ledger_hash}",
        metadata=(("content_format", whole.format), ("sigma_system", sigma),
                  ("leaves", [p["goal_id"] for p in parts]), ("notes", assembly.notes)),
        sigma=sigma))
    return artifact


Part = tuple[str, models.ResolutionOutput]  # (tag, output)


def _parts(view: StepView) -> tuple[list[dict[str, Any]], list[Part]]:
    """The live leaves' outputs, as the prompt shows them and tagged for their files."""
    taken: set[str] = {"root", "assembly"}
    parts: list[dict[str, Any]] = []
    sources: list[Part] = []
    for leaf in view.leaves():
        goal = view.goal(leaf)
        artifact_id = goal.require("output_artifact_id")
        output = view.resolution(artifact_id)
        sources.append((tag_of(goal.summary, taken), output))
        parts.append({"goal_id": goal.id, "goal_summary": goal.summary,
                      "artifact_id": artifact_id, "format": output.format,
                      "content": output.content,
                      **({"files": output.files} if output.files else {}),
                      **({"tests": output.tests} if output.tests else {})})
    return parts, sources


FILE_RULE = (
    "Every part's tests and files are kept in the deliverable. A test file several "
    "sources name with different texts is kept once per source, renamed "
    "<name>__<part>.py, so every test runs on the assembled main.py. Another file two "
    "parts give with different texts must be given once in `files`, composed; a file "
    "you give in `files` replaces the parts' file of that name.")


def _checked_on_the_whole(view: StepView, root_id: str, leaves: list[str]) -> list[Constraint]:
    """Decided again on the whole: the root's logic checks that read the deliverable
    (tests, the tool contract) and the test constraints of every live goal below it
    (a leaf's tests run on the assembled code; a middle layer's were handed to its
    parts, or left to the whole, which must then meet them). Arithmetic was decided over
    the parts by the composite check, and semantic constraints were judged on each
    part."""
    root = [c for c in view.constraints(view.roles(root_id)["selected"])
            if verification.method_of(c) in ("tests", "contract")]
    seen = {c.id for c in root}
    parts = []
    rows = view.subtree_parts(root_id)
    live = composite.live_solution(rows, root_id)
    middle = [r["id"] for r in rows if r["id"] in live and r["id"] != root_id
              and r["id"] not in leaves]
    for leaf in [*leaves, *middle]:
        for c in view.constraints(view.roles(leaf)["selected"]):
            if verification.method_of(c) == "tests" and c.id not in seen:
                seen.add(c.id)
                parts.append(c)
    return [*root, *parts]


def _problem(text: str) -> dict[str, Any]:
    return {"constraint_id": "assembly", "passed": False, "detail": {"problem": text}}


def assembled_output(assembly: models.Assembly, parts: list[Part],
                     ) -> tuple[models.ResolutionOutput, str | None]:
    """The deliverable as verification sees it and as it is saved: the assembled code,
    the tests of ``parts`` (tag, output: the root's own verified output first, then the
    leaves') and the assembly's own, each kept (renamed with its source's tag where
    names clash), and the parts' other files beside the assembly's; with the clash that
    refuses it, if any."""
    tests, clash = assembly_files.tagged(
        [*((tag, part.tests) for tag, part in parts), ("assembly", assembly.tests)])
    files, open_clash = assembly_files.settled(
        assembly.files, [(tag, part.files) for tag, part in parts if tag != "root"])
    whole = models.ResolutionOutput(artifact_type="final", format=assembly.format,
                                    content=assembly.content, files=files, tests=tests)
    return whole, clash or open_clash


def _refused(root: GoalNode, trace: list[dict[str, Any]], attempt: int) -> Done[list[str]]:
    """Assemble again with the violation trace, or refuse the root with it."""
    failed = ", ".join(sorted(str(c["constraint_id"]) for c in trace))
    if attempt < ASSEMBLIES:
        return Done([root.id], StepChanges((
            Flow(root.id, f"the assembly violates {failed}: assembling again "
                          f"({attempt + 1}/{ASSEMBLIES})"),
            Wake((root.id,)),
            UpdateGoal(root.id, S.PENDING, GoalChanges(
                feedback={**(root.feedback or {}),
                          "assembly": {"attempt": attempt, "violations": trace}})))))
    detail = (f"{attempt} assemblies violate {failed}: "
              + json.dumps(trace, sort_keys=True)[:1500])
    return Done([root.parent_id] if root.parent_id else [], StepChanges((RefuseGoal(
        root, RefusalReason.ASSEMBLY_VIOLATES_CONSTRAINTS, detail,
        (("constraints", failed), ("attempts", str(attempt)))),)))
