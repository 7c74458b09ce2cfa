"""Everything one run of the SOLVE loop works with, built once."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from embeddings.encoder import Encoder
from kernel.core.artifacts import Artifacts, BlobStore
from kernel.core.attempts import Attempts
from kernel.core.budget import BudgetEnforcer
from kernel.core.confidence import Confidence
from kernel.core.constraints import ConstraintEngine
from kernel.core.dag import Dependencies
from kernel.core.goal_node import GoalNode
from kernel.core.goals import GoalTree
from kernel.core.ledger import Ledger, LedgerEntry
from kernel.core.logs import TieredLog
from kernel.core.registry import Registry
from kernel.core.run import Run
from kernel.core.state_machine import Status
from kernel.kg.failures import FailureModes
from kernel.kg.history import History
from kernel.kg.patterns import Patterns
from kernel.proposals import Proposals
from kernel.protocol import Proposer
from kernel.protocol.resolver_set import SandboxPolicy
from kernel.refusal import RefusalReason, refuse
from kernel.runtime.calls import Calls
from kernel.runtime.installed import resolvers
from kernel.runtime.repo_input import RepoInput
from kernel.store.base import GraphStore


@dataclass(frozen=True)
class SolveConfig:
    tau_local: float = 0.70
    tau_global: float = 0.50
    stagnation_epsilon: float = 0.05
    max_depth: int = 6
    max_reopens: int = 3  # backtracking budget per goal
    max_wall_seconds: float = 600.0
    build_min_usd: float = 0.05  # a build subgoal gets at least this much, or it is not tried
    build_min_seconds: float = 30.0
    raw_io: bool = False
    # The knowledge graph: when two goal patterns count as similar ((1 + cos) / 2 of their
    # summaries, same constraint signature), rows per boot query, the prompt block's size,
    # and the successes that let the record alone pick a resolver.
    similarity_threshold: float = 0.80
    history_rows: int = 5
    context_chars: int = 3000
    route_min_successes: int = 1
    # Step 1: below this clarity (0..1) the intake asks the person before going on.
    clarity_threshold: float = 0.6
    # What one command run in the sandbox is charged (KERNEL_SANDBOX_RUN_USD).
    sandbox_run_usd: float = 0.01


@dataclass(frozen=True)
class Kernel:
    """What every step of one run shares: the run, its settings, its proposals and the
    services over the graph. Built once by ``build`` (services are injected there, not
    made on first use) and never changed while the run is driven.

    What a step works on is not here: its goal and what the step before handed on come
    in its move (``kernel.solve.moves``); what it has made and not stored yet is the
    run's step buffer (``run.step``, ``kernel.core.run.StepBuffer``); the goal's attempts
    and budget are read from the graph through these services. What every step shares
    and changes is the run's commit order (``run.seq``, the consumed proposals, the
    stored queue): steps commit one after another, in the queue's order."""

    run: Run
    config: SolveConfig
    proposals: Proposals
    blobs: BlobStore
    workspace_root: Path
    tree: GoalTree
    constraints: ConstraintEngine
    budget: BudgetEnforcer
    deps: Dependencies
    attempts: Attempts
    artifacts: Artifacts
    registry: Registry
    confidence: Confidence
    log: TieredLog
    patterns: Patterns
    history: History
    failures: FailureModes
    # The sandbox's policy: what the check's contract tells a model, and what runs it.
    policy: SandboxPolicy = field(default_factory=lambda: resolvers().sandbox.policy())
    # Asks a person in the terminal (--interactive); None parks goals on HIRE instead.
    human_prompt: Callable[[dict[str, Any]], Any] | None = None
    # The run's calls in flight (``--concurrency``): how many at once, never what they decide.
    calls: Calls = field(default_factory=Calls)
    # The repository a repository goal changes (``--repo``), None for a goal from nothing.
    repo: RepoInput | None = None
    started: float = field(default_factory=time.monotonic)

    @property
    def store(self) -> GraphStore:
        return self.run.store

    @property
    def ledger(self) -> Ledger:
        return self.proposals.ledger

    @classmethod
    def build(cls, run: Run, proposer: Proposer | None, data_dir: Path, workspace_root: Path,
              config: SolveConfig | None = None,
              recorded: list[LedgerEntry] | None = None,
              human_prompt: Callable[[dict[str, Any]], Any] | None = None,
              concurrency: int = 1, reuse: bool = True,
              repo: RepoInput | None = None) -> Kernel:
        """The run's context: its proposals (``recorded``: a ledger to replay; its calls,
        up to ``concurrency`` at once; ``reuse``: earlier answers in the graph may serve
        identical requests) and every service over its graph."""
        config = config or SolveConfig()
        started = time.monotonic()
        calls = Calls(concurrency, deadline=started + config.max_wall_seconds)
        store = run.store
        blobs = BlobStore.of_data_dir(data_dir)
        patterns = Patterns(store, Encoder(blobs.root.parent / "embeddings.sqlite"),
                            threshold=config.similarity_threshold)
        return cls(
            run=run, config=config, blobs=blobs, workspace_root=workspace_root,
            proposals=Proposals(Ledger(run), proposer, recorded=recorded, calls=calls,
                                reuse=reuse),
            calls=calls,
            tree=GoalTree(run, config.tau_local, config.tau_global),
            constraints=ConstraintEngine(store), budget=BudgetEnforcer(run),
            deps=Dependencies(store), attempts=Attempts(run), artifacts=Artifacts(run, blobs),
            registry=Registry(store), confidence=Confidence(run),
            log=TieredLog(run, raw_io=config.raw_io), patterns=patterns,
            history=History(store, patterns, rows=config.history_rows),
            failures=FailureModes(run, patterns.encoder), human_prompt=human_prompt,
            started=started, repo=repo)

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def refuse_goal(self, goal: GoalNode, reason: RefusalReason, detail: str, /,
                    **facts: Any) -> list[str]:
        """Record a refusal for the goal, mark it infeasible and wake its parent; returns
        the goals to run next."""
        report = refuse(self.ledger, goal.id, reason, detail, **facts)
        self.tree.transition(goal.id, Status.INFEASIBLE)
        self.log.flow(goal.id, f"infeasible: {report.to_proceed[0]}")
        return [goal.parent_id] if goal.parent_id else []
