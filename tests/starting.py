"""Starting a run in a test with the goal, core, budget and limits spelled out, as the
tests were written; the kernel itself takes one ``RunInputs``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ulid import ULID

from kernel.core.envelopes import ConstraintSpec
from kernel.core.ledger import LedgerEntry
from kernel.protocol import Proposer
from kernel.runtime.inputs import RunInputs
from kernel.runtime.kernel import Kernel, SolveConfig
from kernel.runtime.start import start as start_run
from kernel.store.base import GraphStore


def start(store: GraphStore, goal: str, core: Sequence[ConstraintSpec], budget_usd: float,
          time_seconds: float, proposer: Proposer | None, data_dir: Path, workspace_root: Path,
          config: SolveConfig | None = None, max_attempts: int = 5,
          extra: dict[str, Any] | None = None, ulid: ULID | None = None,
          recorded: list[LedgerEntry] | None = None) -> tuple[Kernel, str]:
    inputs = RunInputs(goal=goal, budget_usd=budget_usd, time_seconds=time_seconds,
                       max_attempts=max_attempts, core=list(core),
                       solve=config or SolveConfig(), **(extra or {}))
    return start_run(store, inputs, proposer, data_dir, workspace_root, ulid=ulid,
                     recorded=recorded)
