"""What the self-model answers before BUILD, as data the kernel records and decides on;
the self-model itself (``resolvers/self_model.py``) reads the graph to answer."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Verdict = Literal["no_builder", "modality_not_buildable", "build_unaffordable"]


class BuildOutlook(BaseModel):
    """The self-model's answer before BUILD; ``reason`` is None when the kernel can build."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    capability: str
    modality: str
    builders: list[str]
    builds_finished: int
    builds_resolved: int
    expected_cost_usd: float
    expected_seconds: float
    share_usd: float
    share_seconds: float
    reason: Verdict | None

    @property
    def can_build(self) -> bool:
        return self.reason is None
