"""``self-model-0``: the kernel describing itself from the graph, free of charge.

Besides the report a goal can ask for, it answers the question BUILD depends on (axiom
S6): can the kernel itself make a tool that would serve this goal, with what it has and
what it can spend? Building needs a resolver that writes code; what the kernel builds
is a Python tool taking text or code, so a goal of another modality (a physical
measurement) is never served by it; and what earlier builds cost, not a fixed minimum,
says whether half the goal's remaining budget is enough.
"""

from __future__ import annotations

import time

from kernel.core.budget import Amount, BudgetEnforcer
from kernel.core.registry import Registry
from kernel.core.run import Run
from kernel.core.units import micros_to_usd, ms_to_seconds, seconds_to_ms, usd_to_micros
from kernel.protocol import Estimate, Resolution, ResolveRequest
from kernel.protocol.resolver_ids import SELF_MODEL_ID
from kernel.protocol.self_model import BuildOutlook, Verdict
from kernel.repositories import knowledge

RESOLVER_ID = SELF_MODEL_ID
BUILDER_CAPABILITY = "generate_code"
# What a built tool accepts (the registry's input_types of every tool BUILD registers).
BUILT_TOOL_MODALITIES = ("code", "text")
HISTORY_ROWS = 20  # the most recent finished builds that inform the cost estimate


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

    def build_outlook(self, capability: str, modality: str, share: Amount,
                      min_usd: float, min_seconds: float) -> BuildOutlook:
        """Whether the kernel can build ``capability`` for the goal with ``share`` of its
        budget. The expected cost is the mean of recent finished builds (failed ones
        count: they were paid for), never below the configured minimum."""
        row = knowledge.builder_record(self.run.store, BUILDER_CAPABILITY, HISTORY_ROWS)
        builds = row["builds"]
        cost = max(usd_to_micros(min_usd), _mean([int(b["cost"]) for b in builds]))
        seconds = max(seconds_to_ms(min_seconds), _mean([int(b["time"]) for b in builds]))
        reason: Verdict | None = None
        if not row["builders"]:
            reason = "no_builder"
        elif modality not in BUILT_TOOL_MODALITIES:
            reason = "modality_not_buildable"
        elif share.cost < cost or share.time < seconds:
            reason = "build_unaffordable"
        return BuildOutlook(
            capability=capability, modality=modality, builders=sorted(row["builders"]),
            builds_finished=len(builds),
            builds_resolved=sum(1 for b in builds if b["status"] == "resolved"),
            expected_cost_usd=micros_to_usd(cost), expected_seconds=ms_to_seconds(seconds),
            share_usd=micros_to_usd(share.cost), share_seconds=ms_to_seconds(share.time),
            reason=reason)


def _mean(values: list[int]) -> int:
    return sum(values) // len(values) if values else 0
