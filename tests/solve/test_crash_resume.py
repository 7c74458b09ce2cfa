"""kill -9 of ``kernel solve`` (the real command), then ``kernel resume``: the run ends as
the uninterrupted one did, whatever was recorded but not yet committed; one process per
run; a dead run shows as interrupted, with the command that continues it."""

from __future__ import annotations

import json
import random
import socket
import sys
from pathlib import Path

import pytest
from ulid import ULID

from kernel.bench.crash import EXAMPLES, _Child, _outcome, check_example
from kernel.core.lease import Lease, LeaseState, RunBusyError, lease_state, run_state
from kernel.settings import KernelSettings
from kernel.solve.session import resume
from kernel.store import open_store

pytestmark = pytest.mark.slow  # runs killed with kill -9 and resumed

LAUNCH = next(e for e in EXAMPLES if e.name == "launch-plan")


def _settings(data_dir: Path, graph: str) -> KernelSettings:
    return KernelSettings(data_dir=data_dir, graph="embedded", graph_name=graph)


@pytest.mark.slow
def test_the_shipped_kill_9_check_passes_on_goals_in_progress_side_by_side(
        data_dir: Path) -> None:
    report = check_example(LAUNCH, data_dir, trials=4, rng=random.Random(7))
    assert [t.detail for t in report.trials if not t.ok] == []
    assert report.identical == 4


@pytest.mark.parametrize(("statement", "number", "when"), [
    # commits that stored proposals with them (a ledger entry rides the next commit)
    ("goal/transition", 5, "after"), ("goal/transition", 8, "after"),
    # a step's proposals obtained, the commit that would store them never made: lost, and
    # asked again (a resolve's output, attempt and spend ride that commit too; an
    # identify's constraints, spend and pattern links ride its set_role)
    ("goal/transition", 2, "before"), ("goal/transition", 8, "before"),
    ("constraint/set_role", 5, "before"),
    # a verify step between its commits: the verdict and its spend are stored, the goal
    # has not moved on yet (a failure that retries)
    ("attempt/record_verification", 1, "after"),
    # the root's verdict, its leaf classification's spend and its move to the gate's
    # decomposition are one commit; so are the children, their dependencies and budgets
    # and the root's move back to pending: made, or lost
    ("goal/transition", 3, "after"), ("goal/create_children", 1, "before"),
    # a leaf's verdict, both calls' spends and its move are one commit: made, or lost
    ("goal/transition", 11, "after"), ("goal/transition", 11, "before"),
    # a retry's spend stored ahead of its step's last commit (not the step's end)
    ("budget/spend", 1, "after")])
def test_a_run_killed_around_a_proposal_resumes_as_the_uninterrupted_one(
        data_dir: Path, statement: str, number: int, when: str) -> None:
    """Killed right after the n-th commit that stored proposals, before the n-th commit
    would have stored some (they are lost and asked again), or between the commits of a
    step, while the launch parts are all in progress: the resume still matches."""
    ulid = ULID()
    child = _Child(data_dir, ulid, sys.executable)
    run_id = f"run:{ulid}"
    tag = f"{statement.replace('/', '-')}-{number}-{when}"
    reference = _settings(data_dir, f"pin-ref-{tag}")
    crashed = _settings(data_dir, f"pin-crash-{tag}")
    try:
        assert child.run(reference.graph_name, LAUNCH.command()).returncode == 0
        killed = child.run(crashed.graph_name, LAUNCH.command(), kill_at=number,
                           when=when, only=statement)
        assert killed.returncode == -9
        resumed = child.run(crashed.graph_name, ["resume", run_id, "--json"])
        assert resumed.returncode == 0, resumed.stderr[-500:]
        assert _outcome(crashed, run_id, False) == _outcome(reference, run_id, False)
    finally:
        for settings in (reference, crashed):
            with open_store(settings) as store:
                store.drop_all()


def test_a_second_process_is_told_who_holds_the_run_and_a_dead_one_shows_interrupted(
        data_dir: Path) -> None:
    ulid = ULID()
    child = _Child(data_dir, ulid, sys.executable)
    run_id = f"run:{ulid}"
    settings = _settings(data_dir, "lease")
    try:
        assert child.run(settings.graph_name, LAUNCH.command(), kill_at=3,
                         only="goal/transition").returncode == -9
        listed = child.run(settings.graph_name, ["runs", "--json"])
        assert json.loads(listed.stdout)[0]["status"] == "interrupted"
        status = child.run(settings.graph_name, ["status", run_id])
        assert f"continue with: kernel resume {run_id}" in status.stdout
        with open_store(settings) as store:
            with Lease(store, run_id):  # this process drives the run now
                assert run_state("pending", lease_state(store, run_id)) == "running"
                with pytest.raises(RunBusyError, match=r"being driven by pid \d+"):
                    resume(store, run_id, data_dir)
                second = child.run(settings.graph_name, ["resume", run_id])
                assert second.returncode == 2 and "being driven by pid" in second.stderr
                assert "Traceback" not in second.stderr
            assert resume(store, run_id, data_dir).status == "resolved"
    finally:
        with open_store(settings) as store:
            store.drop_all()


def test_a_lease_whose_holder_is_gone_is_free() -> None:
    here = socket.gethostname()
    assert not LeaseState(f"{here}:999999999:1", 2**62, None).alive()  # no such pid
    assert not LeaseState("elsewhere:1:1", 0, None).alive()  # another host, expired
    assert LeaseState("elsewhere:1:1", 2**62, None).alive()  # another host, in its lease
    assert run_state("resolved", LeaseState(None, None, None)) == "resolved"
    assert run_state("pending", LeaseState(None, None, "wall-time cap")) == "wall-time cap"


def test_goals_parked_on_a_person_are_stepped_again_when_the_run_resumes(
        initialised_graph, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Some launch parts cannot pay for their calls and park on HIRE while the others go
    on (so they leave the queue); once the requests are answered, resume reaches them."""
    from kernel.protocol import HireAnswer
    from kernel.repositories.requests import record_answer
    from kernel.solve.dispatch import solve
    from resolvers.sandbox.runner import default_workspace_root
    from resolvers.scripted import ScriptedProposer
    from tests.solve.test_ledger_audit import SCRIPT
    from tests.starting import start

    kernel, root = start(initialised_graph, "Plan a product launch", [], 0.4, 600,
                         ScriptedProposer.from_file(SCRIPT), tmp_path, default_workspace_root())
    outcome = solve(kernel, root)
    assert outcome.status == "pending" and outcome.waiting_on, outcome
    answered: set[str] = set()
    for _ in range(5):  # each answer lets the run go on (until it needs more again)
        if outcome.status == "resolved":
            break
        assert outcome.waiting_on and not answered & set(outcome.waiting_on), outcome
        for request_id in outcome.waiting_on:
            record_answer(initialised_graph, request_id,
                          HireAnswer(kind="add_budget", add_usd=1.0, add_seconds=600))
        answered |= set(outcome.waiting_on)
        outcome = resume(initialised_graph, kernel.run.run_id, tmp_path,
                         proposer=ScriptedProposer.from_file(SCRIPT))
    assert outcome.status == "resolved", outcome


@pytest.mark.parametrize("statement, append", [("budget/spend", 1), ("goal/create", 6)])
def test_a_planning_run_killed_mid_plan_resumes_as_a_planning_run(
        data_dir: Path, tmp_path: Path, statement: str, append: int) -> None:
    ulid = ULID()
    child = _Child(data_dir, ulid, sys.executable)
    run_id = f"run:{ulid}"
    settings = _settings(data_dir, f"plan-crash-{append}")
    plan = ["plan", "--example", "swe-agent", "--json"]
    try:
        reference = child.run(f"plan-ref-{append}", plan)
        assert reference.returncode == 0, reference.stderr[-400:]
        killed = child.run(settings.graph_name, plan, kill_at=append, only=statement)
        assert killed.returncode == -9
        resumed = child.run(settings.graph_name, ["resume", run_id, "--json"])
        assert resumed.returncode == 0, resumed.stderr[-400:]
        document = json.loads(resumed.stdout)
        assert document["goal"] == json.loads(reference.stdout)["goal"]
        assert document == json.loads(reference.stdout)  # the same plan, as if never killed
        listed = json.loads(child.run(settings.graph_name, ["runs", "--json"]).stdout)
        assert listed[0]["status"] == "planned"
        with open_store(settings) as store:  # no SOLVE step ran on the planning goal
            assert not store.run("attempt/of_goal", {"goal_id": store.run(
                "run/get", {"run_id": run_id})[0]["root_id"]})
    finally:
        for name in (settings.graph_name, f"plan-ref-{append}"):
            with open_store(_settings(data_dir, name)) as store:
                store.drop_all()


def test_a_held_lease_is_renewed_and_given_back(initialised_graph, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import time

    import kernel.core.lease as lease_module
    from kernel.core.run import Run

    monkeypatch.setattr(lease_module, "RENEW_SECONDS", 0.05)
    run = Run.start(initialised_graph, "lease renewal")
    with Lease(initialised_graph, run.run_id) as lease:
        first = lease_state(initialised_graph, run.run_id).expires_ms
        time.sleep(0.3)
        assert lease_state(initialised_graph, run.run_id).expires_ms > first  # renewed
        lease.stopped, lease.ended = "wall-time cap", True
    state = lease_state(initialised_graph, run.run_id)
    assert state.holder is None and state.stopped == "wall-time cap"
