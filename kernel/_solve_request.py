"""``SolveRequest``: a goal to solve as ``kernel solve`` takes it, checked before anything
is stored or paid for. Exported by ``kernel.api``; a module of its own because its
fields bring in the constraint and suggestion models, which reading the store never needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from kernel.core.envelopes import ConstraintSpec
from kernel.core.units import MAX_AMOUNT
from kernel.errors import ConfigError
from kernel.protocol.suggestion_models import Suggestion


class SolveRequest(BaseModel):
    """A goal to solve, as ``kernel solve`` takes it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    goal: str = Field(min_length=1)
    constraints: list[ConstraintSpec] = Field(
        default_factory=list, description="the human's core constraints; text is parsed as "
                                          "--constraint takes it (TYPE[:DOMAIN]:TEXT)")
    budget_usd: float = Field(default=5.0, gt=0, le=MAX_AMOUNT, allow_inf_nan=False)
    time_seconds: float = Field(default=600.0, gt=0, le=MAX_AMOUNT, allow_inf_nan=False)
    proposer: Literal["auto", "anthropic", "scripted"] = "auto"
    script: Path | None = None
    max_attempts: int = Field(default=5, ge=1, le=1_000_000, description="T_max per goal")
    max_wall_seconds: float = Field(default=600.0, gt=0, le=MAX_AMOUNT, allow_inf_nan=False)
    intake: bool = Field(default=False, description="start with step 1, the intake dialogue")
    fresh: bool = Field(default=False, description="ask every question again: no earlier "
                                                   "answer in the graph is reused")
    suggestions: list[Suggestion] = Field(
        default_factory=list, description="a person's candidates for the goal, weighed "
                                          "with the model's own output on merit alone")
    repo: Path | None = Field(default=None, description="the repository the goal changes: "
                              "its snapshot is the run's input, the output a set of edits")
    test_cmd: str | None = Field(default=None, description="with repo: the command that "
                                 "runs the repository's tests in the sandbox (default: pytest)")
    _implied: list[str] = PrivateAttr(default_factory=list)  # found with the consistency check

    @field_validator("goal")
    @classmethod
    def _goal_has_words(cls, goal: str) -> str:
        if not goal.strip():
            raise ValueError("the goal is empty: say in words what should be achieved")
        return goal.strip()

    @model_validator(mode="before")
    @classmethod
    def _script_core(cls, given: Any) -> Any:
        """A script's ``core`` constraints for the goal join those given (one whose title a
        given constraint already has is left out: the person's own wins)."""
        if not isinstance(given, dict) or given.get("script") is None \
                or given.get("proposer", "auto") == "anthropic":
            return given
        from kernel.core.written_constraint import written_title
        from kernel.runtime.installed import resolvers

        script = resolvers().load_script(Path(given["script"]).expanduser().resolve())
        constraints = list(given.get("constraints") or [])
        titles = {written_title(c) if isinstance(c, str) else getattr(c, "title", None)
                  for c in constraints}
        more = [text for text in script.core_for(str(given.get("goal", "")).strip())
                if written_title(text) not in titles]
        return {**given, "constraints": constraints + more} if more else given

    # Both raise ConfigError, which pydantic passes through: the message is the CLI's own.
    @field_validator("constraints", mode="before")
    @classmethod
    def _parse_text(cls, given: list[Any]) -> list[Any]:
        from kernel.solve.constraint_text import parse_constraint

        return [parse_constraint(c) if isinstance(c, str) else c for c in given]

    @field_validator("proposer", mode="before")
    @classmethod
    def _known_proposer(cls, kind: Any) -> Any:
        from kernel.runtime.proposers import check_proposer

        return check_proposer(kind) if isinstance(kind, str) else kind

    @model_validator(mode="after")
    def _core_is_consistent(self) -> SolveRequest:
        """Core constraints that contradict each other are refused before anything is
        stored or paid for, naming a minimal set that cannot hold together; those the
        others imply are kept for ``implied_core``."""
        if any(c.payload.get("check") == "arith" for c in self.constraints):
            from kernel.solve.core_check import refuse_contradiction  # Z3 loads only when needed

            self._implied = refuse_contradiction(self.constraints).problems()
        return self

    def implied_core(self) -> list[str]:
        """Core constraints the others already imply, said in words (a note, not an error:
        the person typed them)."""
        return list(self._implied)

    @classmethod
    def checked(cls, **fields: Any) -> SolveRequest:
        """Validate, turning the first problem into one line naming the field."""
        try:
            return cls(**fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "request"
            message = str(first["msg"]).removeprefix("Value error, ")
            option = _OPTIONS.get(where, "--" + where.replace("_", "-"))
            raise ConfigError(f"{option}: {message}") from None


# What the person typed for each field (GOAL is the argument, not an option).
_OPTIONS = {"budget_usd": "--budget", "time_seconds": "--time",
            "max_wall_seconds": "--max-wall", "goal": "GOAL (the goal, in words)"}
