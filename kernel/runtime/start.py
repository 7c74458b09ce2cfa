"""Step 1, goal intake: a run, its root goal with the human's core constraints, its budget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ulid import ULID

from kernel.core.budget import Amount, BudgetEnforcer
from kernel.core.constraints import ConstraintEngine
from kernel.core.goals import GoalSpec, GoalTree
from kernel.core.ledger import LedgerEntry
from kernel.core.logs import TieredLog
from kernel.core.run import Run
from kernel.core.units import seconds_to_ms, usd_to_micros
from kernel.protocol import Proposer
from kernel.repositories import runs
from kernel.runtime.inputs import RunInputs
from kernel.runtime.kernel import Kernel
from kernel.store.base import GraphStore


def start(store: GraphStore, inputs: RunInputs, proposer: Proposer | None, data_dir: Path,
          workspace_root: Path, *, ulid: ULID | None = None,
          recorded: list[LedgerEntry] | None = None,
          human_prompt: Callable[[dict[str, Any]], Any] | None = None,
          concurrency: int = 1) -> tuple[Kernel, str]:
    """Create the run (its inputs recorded on it), the root goal and its budget; a replay
    passes the recorded run's ``ulid`` and ledger. ``concurrency`` is how many calls may
    be in flight at once: it changes how long a run takes, never what it commits, so it
    is not one of the run's inputs."""
    run = Run.start(store, inputs.goal[:80], inputs.record(), ulid=ulid,
                    proposed_by=provenance(proposer))
    kernel = Kernel.build(run, proposer, data_dir, workspace_root, inputs.solve,
                          recorded=recorded, human_prompt=human_prompt,
                          concurrency=concurrency, reuse=not inputs.fresh,
                          repo=inputs.repo)
    return kernel, finish_start(kernel, inputs)


def provenance(proposer: Proposer | None) -> tuple[str, str] | None:
    """The proposer's kind (``scripted``, ``anthropic``) and model or script name."""
    if proposer is None:
        return None
    return proposer.kind or proposer.source.split(":")[0], proposer.model or proposer.source


class Starting(Protocol):
    """What the root goal is made with (the run's context has it all): the run, its
    goal tree and constraint engine (the root and its core constraints), its budget (the
    root's allocation) and its log (the line that says the goal was received)."""

    @property
    def run(self) -> Run: ...

    @property
    def tree(self) -> GoalTree: ...

    @property
    def constraints(self) -> ConstraintEngine: ...

    @property
    def budget(self) -> BudgetEnforcer: ...

    @property
    def log(self) -> TieredLog: ...


def finish_start(kernel: Starting, inputs: RunInputs) -> str:
    """The run's root goal and its budget: created, or found where a run killed while
    starting left off (each is one commit, so either exists whole or not at all)."""
    run = kernel.run
    store = run.store
    goal, core, budget_usd, time_seconds = (inputs.goal, inputs.core, inputs.budget_usd,
                                            inputs.time_seconds)
    record = runs.get(store, run.run_id)
    root = record["root_id"] if record else None
    if root is None:
        core_ids = kernel.constraints.upsert(list(core))
        root = kernel.tree.create_root(GoalSpec(goal, max_attempts=inputs.max_attempts,
                                                intake=inputs.intake), core_ids=core_ids)
    if kernel.tree.get(root).cost_allocated == 0 and budget_usd > 0:
        kernel.budget.allocate_root(root, Amount(usd_to_micros(budget_usd),
                                                 seconds_to_ms(time_seconds)))
        kernel.log.flow(root, f"goal received with {len(core)} core constraints, "
                              f"${budget_usd} and {time_seconds}s")
    return str(root)

