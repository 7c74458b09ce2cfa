"""The human as a resolver (step 11, HIRE).

A human answers a capability request in one of three ways: a tool (which the kernel
registers, so the answer is reusable: B8), more budget, or a refusal. The answer reaches
the kernel like any proposal and is recorded in the run's ledger before it is used, so
a replay needs no human. Headless, an unanswered request parks the goal (``Parked``);
``kernel hire answer`` stores the answer and the resumed run picks it up. Interactive,
the kernel asks in the terminal through ``prompt``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kernel.errors import KernelError
from kernel.protocol import Estimate, HireAnswer, Resolution, ResolveRequest
from kernel.protocol.intake_models import IntakeAnswer
from kernel.store.base import GraphStore

HUMAN_ID = "actor:human"


class Parked(KernelError):
    """The request has no answer yet; the goal waits for one."""


Prompt = Callable[[dict[str, Any]], HireAnswer]


class HumanProposer:
    """Answers from the request node (given with ``kernel hire answer``) or the terminal."""

    source = HUMAN_ID

    def __init__(self, store: GraphStore, prompt: Prompt | None = None) -> None:
        self.store = store
        self.prompt = prompt

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        return Estimate(cost_usd=0.0, seconds=0.0)  # a person's time is not the run's budget

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        request_id = request.payload["request_id"]
        rows = self.store.run("hire/get", {"id": request_id})
        stored = rows[0]["request"].get("answer") if rows else None
        if stored:
            answer = HireAnswer.model_validate_json(stored)
            via = "kernel hire answer"
        elif self.prompt is not None:
            answer = self.prompt(request.payload)
            via = "terminal"
        else:
            raise Parked(f"{request_id} waits for an answer: kernel hire answer {request_id}")
        return Resolution(output=answer.model_dump(mode="json"), cost_usd=0.0, seconds=0.0,
                          metadata={"request_id": request_id, "answered_via": via})


class IntakeHuman:
    """The person during intake (step 1): answers stored on the question's request
    (``kernel hire answer ID --intake FILE``), or given in the terminal or by a script
    through ``prompt``; a question nobody answers parks the root (``Parked``)."""

    source = HUMAN_ID

    def __init__(self, store: GraphStore, prompt: Callable[[dict[str, Any]], Any] | None) -> None:
        self.store = store
        self.prompt = prompt

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        return Estimate(cost_usd=0.0, seconds=0.0)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        fingerprint = request.payload["fingerprint"]
        rows = self.store.run("hire/by_fingerprint", {"fingerprint": fingerprint})
        stored = rows[0]["request"].get("answer") if rows else None
        if stored:
            answer = _intake_answer(stored)
            via = "kernel hire answer"
        elif self.prompt is not None:
            answer = IntakeAnswer.model_validate(self.prompt(request.payload))
            via = "terminal or script"
        else:
            raise Parked("the intake waits for the person's answer")
        return Resolution(output=answer.model_dump(mode="json"), cost_usd=0.0, seconds=0.0,
                          metadata={"answered_via": via})


def _intake_answer(stored: str) -> IntakeAnswer:
    """A stored answer: an intake answer, or a declined request (the goal is rejected)."""
    data = json.loads(stored)
    if data.get("kind") == "decline":
        return IntakeAnswer(verdict="reject", note=str(data.get("note", "")))
    return IntakeAnswer.model_validate(data)
