"""Round trips and writes counted by the store layer, per statement name.

Each :meth:`GraphStore.run` is one round trip to the server; a statement whose mode is
not ``read`` is a write (on the embedded store, one fsync'd append to its log). The SOLVE
benchmark reads these counts to report what a dispatch step costs the store.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class StatementStats:
    calls: Counter[str] = field(default_factory=Counter)
    writes: Counter[str] = field(default_factory=Counter)
    seconds: dict[str, float] = field(default_factory=dict)
    hits: Counter[str] = field(default_factory=Counter)  # reads served by the read cache

    def count(self, name: str, *, write: bool, seconds: float) -> None:
        self.calls[name] += 1
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
        if write:
            self.writes[name] += 1

    def hit(self, name: str) -> None:
        self.hits[name] += 1

    @property
    def round_trips(self) -> int:
        return sum(self.calls.values())

    @property
    def write_count(self) -> int:
        return sum(self.writes.values())

    @property
    def store_seconds(self) -> float:
        return sum(self.seconds.values())

    def reset(self) -> None:
        self.calls.clear()
        self.writes.clear()
        self.seconds.clear()
        self.hits.clear()

    def top(self, n: int = 10) -> list[tuple[str, int, int]]:
        """(name, calls, writes) of the ``n`` most called statements."""
        return [(name, calls, self.writes[name]) for name, calls in self.calls.most_common(n)]
