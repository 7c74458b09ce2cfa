"""What a step may read: the graph as committed, through a narrow read-only view.

A step written as an effect producer (``kernel.solve.effects``) sees the run only
through ``StepView``: goals, constraints, stored outputs, the record that may stand in
for a call, whom a resolved goal wakes. None of it writes, records or spends, so a step
can be advanced ahead of its turn without anything to undo, and a test drives a step
with a fake view. ``KernelView`` is the view over a run's ``Kernel``.
"""

from __future__ import annotations

from typing import Any, Protocol

from kernel.core.budget import Amount
from kernel.core.confidence import PathNode
from kernel.core.constraints import Signature
from kernel.core.dag import DagNode
from kernel.core.envelopes import Attempt, Constraint, ToolPlan
from kernel.core.goal_node import GoalNode
from kernel.core.registry import Candidate
from kernel.kg import context as kg_context
from kernel.kg import reuse
from kernel.kg.failures import Diagnosis
from kernel.kg.history import BuildLookup
from kernel.protocol import ToolDefinition
from kernel.protocol.resolver_ids import SELF_MODEL_ID
from kernel.protocol.resolver_set import SandboxPolicy
from kernel.protocol.solve_models import ResolutionOutput
from kernel.protocol.suggestion_models import Suggestion
from kernel.repositories import candidates as weighing
from kernel.repositories import goals, knowledge, requests
from kernel.repositories.knowledge import Coupling
from kernel.runtime.inputs import RunInputs
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import Kernel, SolveConfig
from kernel.solve import composite, prompt_inputs, repo_goal, tools
from kernel.solve.effects import Observe, Recall
from kernel.solve.steps._shared import wake_dependents

OUTLOOK = "self-model/build_outlook"  # the ledger's name for the self-model's answer


class StepView(Protocol):
    """The reads a step makes; nothing here changes the run."""

    @property
    def config(self) -> SolveConfig: ...

    @property
    def run_id(self) -> str: ...

    def path(self, goal_id: str) -> list[PathNode]:
        """The root-to-goal path, each goal with its sigma_v and depth."""
        ...

    def goal(self, goal_id: str) -> GoalNode:
        """The goal as stored."""
        ...

    def roles(self, goal_id: str) -> dict[str, list[str]]:
        """The goal's constraint ids by role (eligible, selected, core, coupling, owed...)."""
        ...

    def constraints(self, ids: list[str]) -> list[Constraint]:
        """The constraints with these ids, in id order."""
        ...

    def stored_output(self, artifact_id: str | None) -> dict[str, Any] | None:
        """The prompt's view of a stored output artifact (None: there is none)."""
        ...

    def inherited(self, goal: GoalNode) -> dict[str, Any] | None:
        """The constraints from above a part works under, as a prompt shows them."""
        ...

    def leaf_record(self, goal: GoalNode) -> Recall | None:
        """The recall of the record that may classify the goal as a leaf (None: none)."""
        ...

    def wakes(self, goal: GoalNode) -> list[str]:
        """The goals to step once ``goal`` resolves."""
        ...

    def history(self, goal: GoalNode, step: str) -> Observe:
        """The observation of what the graph knows of goals like this one, for ``step``
        (``kernel.kg.context.STEP_QUERIES``); its rows make a ``StepHistory``."""
        ...

    def identified_record(self, goal: GoalNode, inherited: list[Constraint]) -> Recall:
        """The recall of an earlier identification that may stand in for step 2's call."""
        ...

    def pattern(self, summary: str, signature: Signature) -> dict[str, Any]:
        """The pattern of a goal with this summary and constraint signature, linked to
        the similar patterns the graph holds, as a commit stores it."""
        ...

    def candidates(self, capabilities: list[str], modality: str | None) -> list[Candidate]:
        """The registered resolvers that provide ``capabilities``, best first."""
        ...

    def registered(self) -> list[dict[str, Any]]:
        """Every registered resolver: its id, description and capability tags."""
        ...

    def tried(self, goal: GoalNode) -> list[Attempt]:
        """The goal's attempts, in order."""
        ...

    def diagnosis(self, name: str, description: str, diagnosed: bool = True) -> Diagnosis:
        """The failure mode a cause so named and described joins (``FailureModes``)."""
        ...

    def couplings(self, root_id: str) -> list[Coupling]:
        """How the leaves under the root are coupled: one row per pair and way (a shared
        logic constraint, an artifact, a dependency path), as the traversal finds them."""
        ...

    def resolution(self, artifact_id: str) -> ResolutionOutput:
        """A stored resolution output, whole."""
        ...

    def subtree_facts(self, goal: GoalNode) -> tuple[dict[str, float], dict[str, list[str]]]:
        """What the goal's parts add up to, and the leaves that leave out each metric."""
        ...

    def subtree_sigmas(self, goal_id: str, sigma_v: float | None = None,
                       ) -> tuple[dict[str, float], list[dict[str, object]]]:
        """sigma_path of the goal and its live descendants (the goal's own sigma_v taken
        as ``sigma_v`` when given), and the rows that differ from what is stored."""
        ...

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

    def artifact_sha256(self, artifact_id: str) -> str:
        """The content hash of a stored artifact."""
        ...

    def suggestions(self) -> list[Suggestion]:
        """The suggestions recorded with the run's inputs (none for a run started by
        hand, without inputs)."""
        ...

    def weighed_verification(self, artifact_id: str) -> str | None:
        """The recorded verification (JSON) of a weighed candidate, if any."""
        ...

    def weighing_history(self, goal: GoalNode, hashes: list[str]) -> Observe:
        """The observation of how often content with these hashes passed before: rows
        of sha256, passed and total."""
        ...

    @property
    def policy(self) -> SandboxPolicy:
        """What code run in the sandbox may use."""
        ...

    def tool_plan(self, artifact_id: str) -> ToolPlan:
        """A stored tool plan: the resolvers a goal's attempt runs, in order."""
        ...

    def dependency_inputs(self, goal: GoalNode) -> list[dict[str, Any]]:
        """What the goals ``goal`` depends on ship, in their order, by content."""
        ...

    def last_output(self, history: list[Attempt]) -> dict[str, Any] | None:
        """The latest verified output among ``history``'s attempts, with its verdict."""
        ...

    def repository(self, goal: GoalNode) -> dict[str, Any]:
        """The repository as the resolve prompt shows it for ``goal``."""
        ...

    def children_keys(self, goal_id: str) -> dict[str, str]:
        """The goal's live children by their decomposition key (how a repeated step
        finds those it made)."""
        ...

    def children(self, goal_id: str) -> list[DagNode]:
        """The goal's live children in creation order, with what each depends on."""
        ...

    def inherited_by_children(self, goal_id: str) -> list[str]:
        """The constraints a child of the goal inherits: its ancestors' resolved ones
        (its own included)."""
        ...

    def cost_left(self, goal_id: str) -> int:
        """What the goal has left to spend, in micro-dollars."""
        ...

    def leaves(self) -> list[str]:
        """The run's live leaves, by id."""
        ...

    def system_sigma(self) -> float | None:
        """The least sigma_path of the run's live leaves (None: one has none yet)."""
        ...

    def subtree_parts(self, goal_id: str) -> list[goals.Part]:
        """The goal and every goal below it, each with its parent, what it spent and
        produced."""
        ...

    # -- read by BUILD --
    def build_lookup(self, tag: str) -> BuildLookup:
        """The lookup before a build of ``tag``: the tools that provide it, earlier
        builds of it in any run, the requests made for it."""
        ...

    def budget_left(self, goal_id: str) -> Amount:
        """What the goal has left to spend, money and time."""
        ...

    def build_outlook(self, goal: GoalNode, tag: str, share: Amount) -> Observe:
        """The observation of the self-model's answer whether the kernel can build
        ``tag`` for the goal with ``share`` of its budget (a ``BuildOutlook``)."""
        ...

    def code_problems(self, code: str) -> list[str]:
        """Why the kernel would not run this code as a tool (empty: it may)."""
        ...

    def tool_problems(self, tool: ToolDefinition) -> list[str]:
        """Every reason the tool cannot be registered (empty: it can)."""
        ...

    # -- read by HIRE --
    def capability_request(self, request_id: str) -> requests.Request | None:
        """The capability request with this id, as stored (None: there is none)."""
        ...

    def request_raised(self, fingerprint: str) -> requests.Request | None:
        """The capability request with this fingerprint, if one was ever raised."""
        ...


class KernelView:
    """``StepView`` over a run's context: reads only."""

    def __init__(self, k: Kernel) -> None:
        self._k = k

    @property
    def config(self) -> SolveConfig:
        return self._k.config

    @property
    def run_id(self) -> str:
        return self._k.run.run_id

    def path(self, goal_id: str) -> list[PathNode]:
        return self._k.confidence.path(goal_id)

    def goal(self, goal_id: str) -> GoalNode:
        return self._k.tree.get(goal_id)

    def roles(self, goal_id: str) -> dict[str, list[str]]:
        return self._k.constraints.roles(goal_id)

    def constraints(self, ids: list[str]) -> list[Constraint]:
        return self._k.constraints.get_many(ids)

    def stored_output(self, artifact_id: str | None) -> dict[str, Any] | None:
        return prompt_inputs.stored_output(self._k.artifacts, artifact_id)

    def inherited(self, goal: GoalNode) -> dict[str, Any] | None:
        return prompt_inputs.inherited_view(self._k.constraints, goal)

    def leaf_record(self, goal: GoalNode) -> Recall | None:
        read = reuse.leaf_read(self._k, goal)
        return None if read is None else Recall("reuse/classify_leaf", goal.id, read)

    def wakes(self, goal: GoalNode) -> list[str]:
        return wake_dependents(self._k.store, goal)

    def history(self, goal: GoalNode, step: str) -> Observe:
        return Observe(kg_context.observed_as(step), goal.id,
                       kg_context.gather(self._k, goal, step))

    def identified_record(self, goal: GoalNode, inherited: list[Constraint]) -> Recall:
        return Recall("reuse/identify", goal.id, reuse.identified_read(self._k, goal, inherited))

    def pattern(self, summary: str, signature: Signature) -> dict[str, Any]:
        patterns = self._k.patterns
        return patterns.row(summary, signature, patterns.similar(summary, signature))

    def candidates(self, capabilities: list[str], modality: str | None) -> list[Candidate]:
        return self._k.registry.candidates(capabilities, modality)

    def registered(self) -> list[dict[str, Any]]:
        return self._k.registry.summary()

    def tried(self, goal: GoalNode) -> list[Attempt]:
        return self._k.attempts.tried(goal)

    def diagnosis(self, name: str, description: str, diagnosed: bool = True) -> Diagnosis:
        return self._k.failures.diagnose(name, description, diagnosed)

    def couplings(self, root_id: str) -> list[Coupling]:
        return knowledge.couplings(self._k.store, root_id)

    def resolution(self, artifact_id: str) -> ResolutionOutput:
        return ResolutionOutput.model_validate_json(self._k.artifacts.read(artifact_id))

    def subtree_facts(self, goal: GoalNode) -> tuple[dict[str, float], dict[str, list[str]]]:
        return composite.subtree_facts(self._k.store, self._k.artifacts, goal)

    def subtree_sigmas(self, goal_id: str, sigma_v: float | None = None,
                       ) -> tuple[dict[str, float], list[dict[str, object]]]:
        return self._k.confidence.subtree_sigmas(goal_id, sigma_v)

    @property
    def in_repository(self) -> bool:
        return self._k.repo is not None

    def resolver_kind(self, resolver_id: str) -> str | None:
        return self._k.registry.kind(resolver_id)

    def repo_test_inputs(self, output: ResolutionOutput
                         ) -> repo_goal.RepoRun | list[dict[str, str]]:
        return repo_goal.test_inputs(self._k.store, self._k.repo, output)

    def artifact_sha256(self, artifact_id: str) -> str:
        return self._k.artifacts.get(artifact_id).sha256

    def suggestions(self) -> list[Suggestion]:
        recorded = self._k.run.config()
        if "suggestions" not in recorded:
            return []
        return list(RunInputs.read(self._k.run.run_id, recorded).suggestions)

    def weighed_verification(self, artifact_id: str) -> str | None:
        return weighing.verification(self._k.store, artifact_id)

    def weighing_history(self, goal: GoalNode, hashes: list[str]) -> Observe:
        store = self._k.store
        return Observe(weighing.HISTORY_OBSERVATION, goal.id, lambda: [
            dict(r) for r in weighing.history(store, hashes, goal.id)])

    @property
    def policy(self) -> SandboxPolicy:
        return self._k.policy

    def tool_plan(self, artifact_id: str) -> ToolPlan:
        return ToolPlan.model_validate_json(self._k.artifacts.read(artifact_id))

    def dependency_inputs(self, goal: GoalNode) -> list[dict[str, Any]]:
        return prompt_inputs.dependency_inputs(self._k.store, self._k.artifacts, goal)

    def last_output(self, history: list[Attempt]) -> dict[str, Any] | None:
        return prompt_inputs.last_output(self._k.artifacts, history)

    def repository(self, goal: GoalNode) -> dict[str, Any]:
        return repo_goal.prompt_section(self._k.store, self._k.repo, self._k.patterns.encoder,
                                       goal)

    def children_keys(self, goal_id: str) -> dict[str, str]:
        return goals.children_keys(self._k.store, goal_id)

    def children(self, goal_id: str) -> list[DagNode]:
        return self._k.deps.children(goal_id)

    def inherited_by_children(self, goal_id: str) -> list[str]:
        return self._k.constraints.inherited_by_children_of(goal_id)

    def cost_left(self, goal_id: str) -> int:
        return self._k.budget.remaining(goal_id).cost

    def leaves(self) -> list[str]:
        return [leaf["id"] for leaf in goals.leaves(self._k.store, self._k.run.run_id)]

    def system_sigma(self) -> float | None:
        return self._k.confidence.system_sigma()

    def subtree_parts(self, goal_id: str) -> list[goals.Part]:
        return goals.subtree_parts(self._k.store, goal_id)

    def build_lookup(self, tag: str) -> BuildLookup:
        return self._k.history.lookup_before_build(tag)

    def budget_left(self, goal_id: str) -> Amount:
        return self._k.budget.remaining(goal_id)

    def build_outlook(self, goal: GoalNode, tag: str, share: Amount) -> Observe:
        k = self._k

        def read() -> dict[str, Any]:
            return resolvers().self_model(k.run).build_outlook(
                tag, goal.modality, share, k.config.build_min_usd,
                k.config.build_min_seconds).model_dump(mode="json")

        return Observe(OUTLOOK, goal.id, read, source=SELF_MODEL_ID)

    def code_problems(self, code: str) -> list[str]:
        return tools.code_problems(code)

    def tool_problems(self, tool: ToolDefinition) -> list[str]:
        return tools.definition_problems(self._k.registry, tool)

    def capability_request(self, request_id: str) -> requests.Request | None:
        return requests.get(self._k.store, request_id)

    def request_raised(self, fingerprint: str) -> requests.Request | None:
        return requests.by_fingerprint(self._k.store, fingerprint)
