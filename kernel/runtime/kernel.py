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
from kernel.refusal import RefusalReason, refuse
from resolvers.sandbox.policy import Constitution


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


@dataclass
class Kernel:
    run: Run
    config: SolveConfig
    proposals: Proposals
    blobs: BlobStore
    workspace_root: Path
    policy: Constitution = field(default_factory=Constitution)
    # Asks a person in the terminal (--interactive); None parks goals on HIRE instead.
    human_prompt: Callable[[dict[str, Any]], Any] | None = None
    # ``kernel intake``: stop once the person has confirmed the root goal (resume solves it).
    stop_after_intake: bool = False
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        store = self.run.store
        self.store = store
        self.tree = GoalTree(self.run, self.config.tau_local, self.config.tau_global)
        self.constraints = ConstraintEngine(store)
        self.budget = BudgetEnforcer(self.run)
        self.deps = Dependencies(store)
        self.attempts = Attempts(self.run)
        self.artifacts = Artifacts(self.run, self.blobs)
        self.registry = Registry(store)
        self.confidence = Confidence(self.run)
        self.ledger = self.proposals.ledger
        self.log = TieredLog(self.run, raw_io=self.config.raw_io)
        self.patterns = Patterns(store, Encoder(self.blobs.root.parent / "embeddings.sqlite"),
                                 threshold=self.config.similarity_threshold)
        self.history = History(store, self.patterns, rows=self.config.history_rows)
        self.failures = FailureModes(self.run, self.patterns.encoder)

    @classmethod
    def build(cls, run: Run, proposer: Proposer | None, data_dir: Path, workspace_root: Path,
              config: SolveConfig | None = None,
              recorded: list[LedgerEntry] | None = None) -> Kernel:
        ledger = Ledger(run)
        return cls(run=run, config=config or SolveConfig(),
                   proposals=Proposals(ledger, proposer, recorded=recorded),
                   blobs=BlobStore.of_data_dir(data_dir), workspace_root=workspace_root)

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
