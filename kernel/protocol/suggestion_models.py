"""A person's suggestion: a candidate artifact for the root goal, with no privilege.

The author is recorded (who had the idea) and never read when candidates are ranked:
``kernel.solve.suggestions`` orders them by what verification and history say of their
content alone.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from kernel.protocol.solve_models import ResolutionOutput


class Suggestion(BaseModel):
    """One ``--suggest``: who offered it and the candidate output it stands for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    author: str = Field(min_length=1, max_length=200)
    output: ResolutionOutput
