"""``RunInputs``: everything a run is given, recorded on its Run node when it starts and
read back, typed, by resume and replay, so nothing about a run's start is looked up by a
key that might be missing.

The record is the model's JSON with only the fields that were given (sorted keys), the
same bytes earlier kernels wrote, so their runs resume and replay as before.

>>> inputs = RunInputs(goal="Count the words", budget_usd=1.0, time_seconds=60.0,
...                    proposer="scripted", script="/tmp/words.script.yaml")
>>> sorted(inputs.record())
['budget_usd', 'core', 'goal', 'max_attempts', 'proposer', 'script', 'solve', 'time_seconds']
>>> RunInputs.from_record(inputs.record()) == inputs
True
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kernel.core.envelopes import ConstraintSpec
from kernel.core.run import Run
from kernel.errors import ConfigError
from kernel.protocol.suggestion_models import Suggestion
from kernel.runtime.kernel import SolveConfig
from kernel.runtime.repo_input import RepoInput


class RunInputs(BaseModel):
    """A run's inputs; ``proposer`` with ``script`` or ``model`` says how to find its
    proposer again on resume (``kernel replay`` serves every proposal from the ledger)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    goal: str
    budget_usd: float
    time_seconds: float
    max_attempts: int = 5
    core: list[ConstraintSpec] = Field(default_factory=list)
    solve: SolveConfig = Field(default_factory=SolveConfig)
    proposer: Literal["scripted", "anthropic"] | None = None
    script: str | None = None
    model: str | None = None
    mode: Literal["plan"] | None = None  # a planning run (kernel plan)
    intake: bool = False  # step 1, the intake dialogue, comes first
    stop_after_intake: bool = False  # `kernel intake`: stop once the goal is confirmed
    suggestions: list[Suggestion] = Field(default_factory=list)
    # ``--fresh``: every question is asked again; no earlier answer in the graph is reused
    fresh: bool = False
    # ``--repo``: the repository the goal changes, and the snapshot's tree hash
    repo: RepoInput | None = None

    def record(self) -> dict[str, Any]:
        """What the Run node stores: the fields always recorded, and those given."""
        always = {"goal", "budget_usd", "time_seconds", "max_attempts", "core", "solve"}
        return self.model_dump(mode="json", include=always | self.model_fields_set)

    @classmethod
    def from_record(cls, recorded: dict[str, Any]) -> RunInputs:
        return cls.model_validate(recorded)

    @classmethod
    def of_run(cls, run: Run) -> RunInputs:
        """The inputs ``run`` recorded; a run that recorded none (or inputs this kernel
        cannot read) is named with what is wrong."""
        return cls.read(run.run_id, run.config())

    @classmethod
    def read(cls, run_id: str, recorded: dict[str, Any]) -> RunInputs:
        """The inputs in ``recorded`` (what ``run_id``'s Run node holds), read as
        ``of_run`` does, for a caller that has the record already."""
        if "goal" not in recorded:
            raise ConfigError(f"{run_id} records no inputs (goal, budget) to run from")
        try:
            return cls.from_record(recorded)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{run_id}: its recorded input {where!r} cannot be read "
                              f"({first['msg']}); it was started by another kernel "
                              "version") from None
