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
from typing import Any

from pydantic import BaseModel

from kernel.protocol import Estimate, HireAnswer, Proposer, Resolution, ResolveRequest
from kernel.protocol.errors import Parked
from kernel.protocol.intake_models import IntakeAnswer
from kernel.protocol.resolver_ids import HUMAN_ID
from kernel.protocol.resolver_set import Prompt
from kernel.repositories import requests
from kernel.store.base import GraphStore

__all__ = ["HUMAN_ID", "HumanProposer", "IntakeHuman", "Parked"]


class HumanProposer(Proposer):
    """Answers from the request node (given with ``kernel hire answer``) or the terminal."""

    source = HUMAN_ID
    prompted_via = "terminal"

    def __init__(self, store: GraphStore, prompt: Prompt | None = None) -> None:
        self.store = store
        self.prompt = prompt

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        return Estimate(cost_usd=0.0, seconds=0.0)  # a person's time is not the run's budget

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        stored = self._stored(request.payload)
        answer: BaseModel
        if stored:
            answer = self._parse(stored)
            via = "kernel hire answer"
        elif self.prompt is not None:
            answer = self._parse_given(self.prompt(request.payload))
            via = self.prompted_via
        else:
            raise Parked(self._waiting(request.payload))
        return Resolution(output=answer.model_dump(mode="json"), cost_usd=0.0, seconds=0.0,
                          metadata={**self._about(request.payload), "answered_via": via})

    # What differs between a HIRE request and an intake question.
    def _stored(self, payload: dict[str, Any]) -> str | None:
        request = requests.get(self.store, payload["request_id"])
        return request.get("answer") if request else None

    def _parse(self, stored: str) -> BaseModel:
        return HireAnswer.model_validate_json(stored)

    def _parse_given(self, given: Any) -> BaseModel:
        assert isinstance(given, BaseModel)  # the terminal prompt returns a checked HireAnswer
        return given

    def _waiting(self, payload: dict[str, Any]) -> str:
        request_id = payload["request_id"]
        return f"{request_id} waits for an answer: kernel hire answer {request_id}"

    def _about(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {"request_id": payload["request_id"]}


class IntakeHuman(HumanProposer):
    """The person during intake (step 1): answers stored on the question's request
    (``kernel hire answer ID --intake FILE``, found by the question's fingerprint), or
    given in the terminal or by a script through ``prompt``; a question nobody answers
    leaves the root parked (``Parked``)."""

    prompted_via = "terminal or script"

    def _stored(self, payload: dict[str, Any]) -> str | None:
        request = requests.by_fingerprint(self.store, payload["fingerprint"])
        return request.get("answer") if request else None

    def _parse(self, stored: str) -> BaseModel:
        """An intake answer, or a declined request (the goal is rejected)."""
        data = json.loads(stored)
        if data.get("kind") == "decline":
            return IntakeAnswer(verdict="reject", note=str(data.get("note", "")))
        return IntakeAnswer.model_validate(data)

    def _parse_given(self, given: Any) -> BaseModel:
        return IntakeAnswer.model_validate(given)

    def _waiting(self, payload: dict[str, Any]) -> str:
        return "the intake waits for the person's answer"

    def _about(self, payload: dict[str, Any]) -> dict[str, Any]:
        return {}
