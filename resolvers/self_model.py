"""``self-model-0``: the kernel describing itself from the graph, free of charge."""

from __future__ import annotations

import time

from kernel.core.budget import BudgetEnforcer
from kernel.core.registry import Registry
from kernel.core.run import Run
from kernel.core.units import micros_to_usd, ms_to_seconds
from kernel.protocol import Estimate, Resolution, ResolveRequest

RESOLVER_ID = "resolver:self-model-0"


class SelfModel:
    id = RESOLVER_ID

    def __init__(self, run: Run) -> None:
        self.run = run

    def estimate_cost_time(self, request: ResolveRequest) -> Estimate:
        return Estimate(cost_usd=0.0, seconds=0.0)

    def resolve(self, request: ResolveRequest) -> Resolution:
        start = time.perf_counter()
        resolvers = Registry(self.run.store).summary()
        capabilities = sorted({tag for r in resolvers for tag in r["capabilities"]})
        remaining = BudgetEnforcer(self.run).remaining(request.goal_id)
        report = {
            "resolvers": resolvers,
            "capabilities": capabilities,
            "budget": {"goal_id": request.goal_id, "cost_usd": micros_to_usd(remaining.cost),
                       "seconds": ms_to_seconds(remaining.time)},
        }
        return Resolution(output=report, cost_usd=0.0, seconds=time.perf_counter() - start,
                          metadata={"operation": request.operation})
