"""What each kernel operation asks Claude for: one validated output model per operation.

These are the shapes of untrusted proposals; the kernel validates them here and decides
what, if anything, to commit.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


# What a goal works in: text, code and json are what registered tools accept; image,
# sketch and spec are inputs a person or a future tool reads; physical is work in the
# world, which only a person (HIRE) can do.
Modality = Literal["text", "code", "json", "image", "sketch", "spec", "physical"]


class ProposedConstraint(_Out):
    type: Literal["logic", "semantic"]
    domain: str = Field(min_length=1, description="software, cost, schedule, latency, ...")
    title: str = Field(min_length=1, description="short human label")
    payload: dict[str, Any] = Field(default_factory=dict,
                          description="logic: how it is checked, one of "
                                      "{'check': 'arith', 'expr': 'cost_usd <= 0.5'}, "
                                      "{'check': 'test', 'tests': ['test_name']}, "
                                      "{'check': 'tool_contract'}; semantic: a rubric")
    explicit: bool = Field(description="stated in the goal (true) or implied (false)")
    removal_consequence: str = Field(default="", description="what goes wrong without it")


class IdentifiedConstraints(_Out):
    constraints: list[ProposedConstraint] = Field(
        description="the goal's constraints (the core ones given with -c are added anyway)")
    required_capabilities: list[str] = Field(
        default_factory=list, description="capability tags a resolver must provide "
                                          "(none: the default, code generation)")
    open_questions: list[str] = Field(default_factory=list,
                                      description="what the goal leaves unsaid")


class SelectedConstraints(_Out):
    constraint_ids: list[str] = Field(
        description="the constraints to verify: ids or exact titles of eligible ones")
    rationale: str = Field(description="why these and no fewer")


class PlanStep(_Out):
    resolver_id: str = Field(description="a registered resolver, e.g. resolver:claude-code-0")
    capability: str = Field(description="the capability tag it is used for")
    params: dict[str, Any] = Field(default_factory=dict, description="what the tool is given")


class ResolverRanking(_Out):
    steps: list[PlanStep] = Field(min_length=1, description=(
        "the tools in the order they run; each step's output is the next one's input"))
    ranking: list[dict[str, Any]] = Field(default_factory=list,
                                description="[{resolver_id, score, reason}] for every candidate")
    rationale: str = Field(description="why this plan")


class ResolutionOutput(_Out):
    artifact_type: str = Field(description="code, doc, data, ...")
    format: str = Field(description="python, markdown, json, ...")
    content: str = Field(description="the artifact; python content runs as main.py")
    files: dict[str, str] = Field(default_factory=dict, description="path -> text, if several")
    tests: dict[str, str] = Field(default_factory=dict, description="path -> test file text")
    metrics: dict[str, float] = Field(default_factory=dict,
                                      description="measured numbers the constraints refer to")
    notes: str = Field(default="", description="what a reader should know about it")

    def workspace_files(self) -> dict[str, str]:
        """Path -> text as the sandbox lays the output out: the files, python ``content``
        as ``main.py`` unless a file of that name is given, and the tests beside them."""
        files = dict(self.files)
        if self.content and self.format == "python" and "main.py" not in files:
            files["main.py"] = self.content
        files.update(self.tests)
        return files


class SemanticCheck(_Out):
    constraint_id: str = Field(description="the judged constraint's id or exact title")
    passed: bool = Field(description="the output meets the constraint")
    sigma: float = Field(ge=0, le=1, description="confidence in the judgment (below 1)")
    rubric_trace: str = Field(description="why, in a sentence")
    repair_suggestion: str = Field(default="", description="what would make it pass")


class SemanticVerification(_Out):
    checks: list[SemanticCheck] = Field(
        description="one per judged constraint; a constraint left out fails with σ 0")


class ProposedChild(_Out):
    key: str = Field(description="a short unique name used in dependencies")
    goal_description: str = Field(description="the part's goal, stated completely")
    goal_summary: str = Field(description="a short name; script entries match it by glob")
    modality: Modality = Field(default="text", description="what the part produces")
    relative_complexity: float = Field(gt=0, description="its share of the budget, relative")
    answers_for: list[str] = Field(default_factory=list, description=(
        "the goal's constraints (ids or exact titles) this part answers for: it is verified "
        "against them and defines the tests they name"))


class Dependency(_Out):
    child: str = Field(description="a child's key")
    depends_on: str = Field(description="the key of the child it needs first")


class Decomposition(_Out):
    children: list[ProposedChild] = Field(min_length=1, description="the fewest parts")
    dependencies: list[Dependency] = Field(
        default_factory=list, description="which part needs which part's output first")
    rationale: str = Field(description="why this split")
    assembly_answers_for: list[str] = Field(default_factory=list, description=(
        "the goal's constraints (ids or exact titles) no single part answers for: the whole "
        "does (the assembly, or the parts added up). Every logic constraint of the goal is "
        "named exactly once, here or in one part's answers_for"))


class LeafClassification(_Out):
    is_leaf: bool = Field(description="one bounded piece of work that needs no split")
    leaf_kind: Literal["atomic", "off_the_shelf", "contracted", "constraint_exhausted"] | None = \
        Field(description="required when is_leaf; null otherwise")
    leaf_reason: str = Field(description="why, in a sentence")


class ConstraintFeedback(_Out):
    constraint_id: str = Field(description="the violated constraint's id or title")
    diagnosis: str = Field(description="why the attempt violated it")
    fix: str = Field(description="what the next attempt must change")
    evidence: str = Field(default="", description=(
        "the words of the violation trace the diagnosis rests on (a failing test's "
        "name and assertion, an error line, a missing metric), quoted"))


class Feedback(_Out):
    summary: str = Field(description="the diagnosis in a sentence")
    per_constraint: list[ConstraintFeedback] = Field(
        default_factory=list, description="one per violated constraint the diagnosis explains")
    failure_mode: str = Field(pattern=r"^[a-z0-9_]+$",
                              description="a snake_case slug naming the cause")
    rescope: bool = Field(default=False,
                          description="true if the failure stems from the parent's decomposition")


class CapabilityGap(_Out):
    capability_tag: str = Field(pattern=r"^[a-z0-9_]+$", description="the missing capability")
    build_constraints: list[ProposedConstraint] = Field(
        default_factory=list, description="what a tool providing it must meet")
    buildable: bool = Field(description="can software built here provide it")
    rationale: str = Field(description="why it is missing, from the failures shown")


class Conflict(_Out):
    nodes_involved: list[str] = Field(description="goal ids or summaries of the leaves in conflict")
    description: str = Field(description="what contradicts what")
    coupling_constraints: list[ProposedConstraint] = Field(
        default_factory=list, description="constraints that would resolve it, on both")


class ConsistencyReview(_Out):
    verdict: Literal["SAT", "UNSAT"] = Field(description="SAT: the outputs agree")
    conflicts: list[Conflict] = Field(default_factory=list, description="when UNSAT")


class Assembly(_Out):
    content: str = Field(description="the final deliverable, built from the parts; python "
                                     "content runs as main.py")
    format: str = Field(description="python, markdown, json, ...")
    files: dict[str, str] = Field(default_factory=dict, description="path -> text, if several")
    tests: dict[str, str] = Field(default_factory=dict,
                                  description="test files for the whole; the parts' tests run "
                                              "too (one of the same name is replaced)")
    notes: str = Field(default="", description="what was combined, and how")


class SandboxRun(BaseModel):
    """What codex-tools-0 reports: an environment-dependent proposal, recorded like any other."""

    passed: bool
    results: list[dict[str, Any]]
    # A repository's dependency install before its tests (dependency_setup.py): its hash,
    # whether the cache served it, and why it failed; absent when it has no requirements.
    setup: dict[str, Any] | None = None
