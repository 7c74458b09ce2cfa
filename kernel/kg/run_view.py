"""What the knowledge graph's readers need of a run, as a protocol the knowledge graph
owns: the runtime's ``Kernel`` satisfies it, and ``kernel.kg`` never imports the
runtime (not even for its types), so the runtime stays the layer above."""

from __future__ import annotations

from typing import Protocol

from kernel.core.constraints import ConstraintEngine
from kernel.core.run import Run
from kernel.kg.history import History
from kernel.proposals import Proposals
from kernel.store.base import GraphStore


class PromptBudget(Protocol):
    @property
    def context_chars(self) -> int: ...


class KnowledgeRun(Protocol):
    """A run as the reuse and prompt-context readers see it."""

    @property
    def store(self) -> GraphStore: ...

    @property
    def run(self) -> Run: ...

    @property
    def constraints(self) -> ConstraintEngine: ...

    @property
    def proposals(self) -> Proposals: ...

    @property
    def history(self) -> History: ...

    @property
    def config(self) -> PromptBudget: ...
