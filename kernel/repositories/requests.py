"""Capability requests (HIRE): who asked for what, the goals parked on them, the answers."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from kernel.core.run import Run
from kernel.errors import KernelError
from kernel.protocol import HireAnswer
from kernel.protocol.intake_models import IntakeAnswer
from kernel.store.base import GraphStore

INTAKE_TAG = "goal_intake"  # the requests that hold step 1's questions


class Request(TypedDict, total=False):
    """A ``CapabilityRequest`` node's properties as stored."""

    id: str
    fingerprint: str
    capability_tag: str
    reason: str
    status: str  # requested, delivered, declined
    budget_class: str
    rationale: str
    build_constraints: str  # canonical JSON
    run_id: str
    goal_id: str
    seq: int
    caption: str
    answer: str  # the person's answer, as JSON, until the kernel applies it
    resolver_id: str  # the tool a delivered request handed over


class WaitingGoal(TypedDict):
    """A goal a request was raised for."""

    id: str
    run_id: str
    summary: str
    status: str


class Listed(Request, total=False):
    goals: list[WaitingGoal]


class Parked(TypedDict):
    id: str
    awaiting: str


class HireAnswerError(KernelError):
    """An answer cannot be recorded for that request; the message says why."""


def get(store: GraphStore, request_id: str) -> Request | None:
    rows = store.run("hire/get", {"id": request_id})
    return cast(Request, rows[0]["request"]) if rows else None


def by_fingerprint(store: GraphStore, fingerprint: str) -> Request | None:
    """The request with this fingerprint, if one was ever raised."""
    rows = store.run("hire/by_fingerprint", {"fingerprint": fingerprint})
    return cast(Request, rows[0]["request"]) if rows else None


def parked(store: GraphStore, run_id: str) -> list[Parked]:
    """The run's live goals parked on a request, in creation order."""
    return [Parked(id=r["id"], awaiting=r["awaiting"])
            for r in store.run("hire/waiting", {"run_id": run_id})]


def open_request(run: Run, params: dict[str, Any], *, what: str) -> str:
    """Raise (or join) a request and park the goal on it, in one commit; its id."""
    return str(run.commit("hire/open", params, what=what)[0]["id"])


def decline(run: Run, params: dict[str, Any], *, what: str) -> None:
    run.commit("hire/decline", params, what=what)


def add_budget(run: Run, params: dict[str, Any], *, what: str) -> None:
    run.commit("hire/add_budget", params, what=what)


def record_answer(store: GraphStore, request_id: str, answer: HireAnswer | IntakeAnswer) -> None:
    """Store a human's answer for the kernel to apply on resume (``kernel hire answer``):
    an intake question takes an intake answer (or a refusal), any other request a HIRE
    answer."""
    request = get(store, request_id)
    if request is None:
        raise HireAnswerError(f"no capability request {request_id!r}; 'kernel hire list' "
                              "shows the open ones")
    status = request["status"]
    if status != "requested":
        raise HireAnswerError(f"{request_id} is {status}, not open: a request is answered once")
    asks_intake = request["capability_tag"] == INTAKE_TAG
    if asks_intake and isinstance(answer, HireAnswer) and answer.kind != "decline":
        raise HireAnswerError(f"{request_id} asks about the goal itself: answer with --intake "
                              "FILE (or --decline to reject the goal)")
    if not asks_intake and isinstance(answer, IntakeAnswer):
        raise HireAnswerError(f"{request_id} asks for a capability, not about the goal: "
                              "answer with --resolver, --add-budget or --decline")
    tool = answer.tool if isinstance(answer, HireAnswer) else None
    if tool is not None and tool.id and store.run("registry/get", {"id": tool.id}):
        raise HireAnswerError(f"a resolver {tool.id} is already registered: give the "
                              "tool another id")
    if not store.run("hire/record_answer", {"id": request_id, "answer": answer.model_dump_json()}):
        raise HireAnswerError(f"{request_id} was answered meanwhile")


def list_requests(store: GraphStore, statuses: list[str] | None = None) -> list[Listed]:
    """Requests (all, or those in ``statuses``) with the goals waiting on them."""
    return [cast(Listed, {**r["request"], "goals": [g for g in r["goals"] if g.get("id")]})
            for r in store.run("hire/list", {"statuses": statuses or []})]


def runs_waiting_on(store: GraphStore, request_id: str) -> list[str]:
    """The runs with a goal parked on the request (the ones to resume once answered)."""
    return sorted({g["run_id"] for r in list_requests(store) if r["id"] == request_id
                   for g in r.get("goals", []) if g.get("run_id")})
