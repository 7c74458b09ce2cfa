"""Starting, resuming and replaying runs from what the run recorded about itself."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ulid import ULID

from kernel.core.lease import Lease
from kernel.core.ledger import LedgerEntry, load_entries, parse_entries, verify_chain, verify_file
from kernel.core.run import Run
from kernel.core.state_machine import TERMINAL
from kernel.core.summary import summary, summary_hash
from kernel.disk_space import STORE_HEADROOM, full_message, out_of_space
from kernel.errors import ConfigError, RunInterrupted, StoreUnavailableError
from kernel.proposals import SERVED, DivergenceError
from kernel.protocol import Proposer
from kernel.repositories import goals, runs
from kernel.runtime.inputs import RunInputs
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import Kernel
from kernel.runtime.proposers import proposer_from
from kernel.runtime.start import finish_start, start
from kernel.schema import init_schema
from kernel.settings import KernelSettings
from kernel.solve import repo_goal
from kernel.solve.dispatch import Outcome, solve
from kernel.store import open_store
from kernel.store.base import GraphStore

if TYPE_CHECKING:
    from kernel.plan.planner import Planning


def resume(store: GraphStore, run_id: str, data_dir: Path,
           proposer: Proposer | None = None,
           on_step: Callable[[str], None] | None = None,
           human_prompt: Callable[[dict[str, Any]], Any] | None = None,
           max_wall_seconds: float | None = None, concurrency: int = 1,
           fresh: bool = False) -> Outcome:
    """Continue a run where its committed state stands (recorded proposals first);
    ``max_wall_seconds`` replaces the run's wall-time cap for this stretch, and up to
    ``concurrency`` calls are in flight at once; ``fresh`` (or a run started fresh)
    asks every new question again instead of reusing an earlier answer."""
    Run.load(store, run_id)  # an unknown run is named as such
    with Lease(store, run_id) as lease:
        run = Run.load(store, run_id)  # read again under the lease
        inputs = RunInputs.of_run(run)
        if inputs.mode == "plan":
            raise ConfigError(f"{run_id} is a planning run: 'kernel resume' continues it "
                              "(kernel.plan.session.resume_plan)")
        repo_goal.prepare(store, inputs.repo, data_dir)  # the same tree, or refused
        workspaces = resolvers().sandbox.default_root()
        # a killed run's sandboxes
        resolvers().sandbox.remove_leftovers(workspaces, run_id.removeprefix("run:"))
        solve_config = inputs.solve
        if max_wall_seconds is not None:
            solve_config = replace(solve_config, max_wall_seconds=max_wall_seconds)
        kernel = Kernel.build(run, proposer or proposer_from(inputs), data_dir,
                              workspaces, solve_config, human_prompt=human_prompt,
                              concurrency=concurrency, reuse=not (inputs.fresh or fresh),
                              repo=inputs.repo)
        root = finish_start(kernel, inputs)
        # `kernel intake` stops once the goal is confirmed, by whichever resume confirms it
        stop_after_intake = inputs.stop_after_intake and kernel.tree.get(root).intake != "done"
        return _drive(kernel, root, lease, on_step, stop_after_intake)


def _drive(kernel: Kernel, root: str, lease: Lease, on_step: Callable[[str], None] | None,
           stop_after_intake: bool = False) -> Outcome:
    """Solve under the run's lease; say on release why the run stopped."""
    try:
        outcome = solve(kernel, root, on_step, stop_after_intake=stop_after_intake)
    except KeyboardInterrupt:
        lease.stopped = "interrupted"
        raise RunInterrupted(kernel.run.run_id) from None
    except StoreUnavailableError as exc:  # the lease cannot be released either: it lapses
        lease.stopped = "interrupted"
        raise RunInterrupted(kernel.run.run_id, because=str(exc)) from exc
    except Exception as exc:  # the kernel's own write (an artifact, a cache) found no room
        full = out_of_space(exc)
        if full is None:
            raise
        lease.stopped = "interrupted"
        raise RunInterrupted(kernel.run.run_id, because=full_message(
            full.path or kernel.blobs.root, STORE_HEADROOM, "the kernel")) from exc
    lease.stopped, lease.ended = stop_reason(outcome), True
    return outcome


def stop_reason(outcome: Outcome) -> str | None:
    """Why a run that returned is not finished (None: it is)."""
    if outcome.status in TERMINAL:
        return None
    if outcome.stopped:
        return outcome.stopped.split(":")[0]  # "wall-time cap", "model unavailable"
    return "waiting on a person" if outcome.waiting_on else "stopped"


@dataclass(frozen=True)
class ReplayResult:
    run_id: str
    original_hash: str
    replay_hash: str | None
    divergence: str | None
    tampered: str | None = None  # the first problem of the ledger's chain, if any
    differences: tuple[str, ...] = ()  # where the committed state is not what the ledger implies
    # Proposals the ledger records that no commit has applied yet (a run stopped between
    # recording them and committing what they decide): `kernel resume` applies them.
    pending: tuple[LedgerEntry, ...] = ()

    @property
    def identical(self) -> bool:
        return self.tampered is None and self.divergence is None and \
            self.original_hash == self.replay_hash


def replay(settings: KernelSettings, run_id: str, ledger_file: Path | None = None,
           ) -> ReplayResult:
    """Re-run a recorded run from the boot graph in a scratch graph, serving every proposal
    from its ledger (the graph's, or an exported file), and compare the committed states.

    The chain is verified first: a ledger that does not verify is reported as tampered,
    and nothing is replayed from it. The scratch graph is emptied, not dropped, so the
    next replay finds its schema built."""
    with open_store(settings) as original:
        run = Run.load(original, run_id)
        inputs = RunInputs.of_run(run)
        head, size, recorded = load_entries(original, run_id)
        committed = summary(original, run_id)
        original_hash = summary_hash(original, run_id)
        # A run stopped (or exported) before its root goal's commit has no goal left to
        # do, yet is not finished: resume creates the root and goes on.
        record = runs.get(original, run_id)
        started = record is not None and record["root_id"] is not None
        finished = started and not goals.unfinished(original, run_id)
        pending = () if finished else pending_proposals(recorded, run.proposals)
    if ledger_file is None:
        problems = verify_chain(recorded, head=head, size=size)
    else:
        data = ledger_file.read_bytes()
        problems = verify_file(data)
        if not problems:
            recorded = parse_entries(data.decode())[0]
        if not problems and recorded and recorded[0].run_id != run_id:
            raise ConfigError(f"{ledger_file} is the ledger of {recorded[0].run_id}, "
                              f"not of {run_id}")
    if problems:
        return ReplayResult(run_id, original_hash, None, None, tampered=str(problems[0]))
    scratch_settings = KernelSettings(graph="embedded", data_dir=settings.data_dir,
                                      graph_name=f"{settings.graph_name}-replay")
    scratch = open_store(scratch_settings)
    divergence = None
    try:
        scratch.empty()
        init_schema(scratch)
        repo_goal.prepare(scratch, inputs.repo, settings.data_dir)
        with tempfile.TemporaryDirectory() as blobs:
            kernel, root = start(scratch, inputs, None, Path(blobs), resolvers().sandbox.default_root(),
                                 ulid=ULID.from_str(run_id.removeprefix("run:")),
                                 recorded=recorded)
            try:
                if inputs.mode == "plan":
                    _replan(kernel, root, inputs)
                else:
                    solve(kernel, root)
            except DivergenceError as exc:
                divergence = str(exc)
        implied = summary(scratch, run_id)
        differences = state_differences(committed, implied, complete=finished,
                                        pending_goals={e.goal_id for e in pending})
        if divergence is not None and finished:
            return ReplayResult(run_id, original_hash, None, divergence,
                                differences=tuple(differences))
        return ReplayResult(run_id, original_hash, summary_hash(scratch, run_id),
                            divergence if differences else None,
                            differences=tuple(differences), pending=pending)
    finally:
        scratch.empty()
        scratch.close()


def _replan(kernel: Planning, root: str, inputs: RunInputs) -> None:
    """A planning run is replayed by planning again (a refusal is part of what it did)."""
    from kernel.plan.compose import PlanRefused
    from kernel.plan.planner import make_plan
    from kernel.plan.session import recorded_verifications

    with contextlib.suppress(PlanRefused):
        make_plan(kernel, root, recorded_verifications(inputs))


def pending_proposals(entries: list[LedgerEntry], consumed: int) -> tuple[LedgerEntry, ...]:
    """The served entries (proposals, observations) past the ``consumed`` ones the run's
    commits applied: recorded, but what they decide is not committed yet."""
    served = [e for e in entries if e.kind in SERVED]
    return tuple(served[consumed:])


def state_differences(committed: dict[str, Any], implied: dict[str, Any],
                      complete: bool = True, pending_goals: set[str | None] | None = None,
                      ) -> list[str]:
    """Where a run's committed goals, attempts and budget events differ from those its
    ledger implies (``complete=False``: an unfinished run, whose replay may go one step
    further; then only what the graph holds is checked). For the goals of pending
    proposals (``pending_goals``), a value the graph does not hold yet but the replay wrote
    is what the pending proposal will commit, not a difference; a value the graph holds
    that the ledger contradicts always is."""
    pending_goals = pending_goals or set()
    found: list[str] = []
    for part, label in (("goals", "goal"), ("attempts", "attempt"), ("budget", "budget event")):
        have = {row["id"]: row for row in committed[part]}
        want = {row["id"]: row for row in implied[part]}
        for key in sorted(have.keys() | want.keys()):
            if key not in want:
                found.append(f"{label} {key} is in the graph, but the ledger implies no such "
                             f"{label}")
            elif key not in have:
                if complete:
                    found.append(f"{label} {key} is implied by the ledger, but missing from "
                                 "the graph")
            else:
                found += [f"{label} {key}: {f} is {have[key][f]!r} in the graph, "
                          f"{want[key].get(f)!r} by the ledger"
                          for f in _differing(part, have[key], want[key], complete,
                                              pending_goals)]
    return found


def _differing(part: str, have: dict[str, Any], want: dict[str, Any], complete: bool,
               pending_goals: set[str | None]) -> list[str]:
    """The fields of one goal, attempt or budget event that the graph and the ledger
    disagree on, less what an unfinished run has yet to write (see state_differences)."""
    fields = [f for f in sorted(have) if have[f] != want.get(f)]
    if complete:
        return fields
    if part == "goals":
        fields = [f for f in fields if have.get("status") in TERMINAL]
    owner = have["id"] if part == "goals" else have.get("goal_id")
    if owner in pending_goals:
        fields = [f for f in fields if have[f] is not None]
    return fields


def start_and_solve(settings: KernelSettings, store: GraphStore, inputs: RunInputs,
                    proposer: Proposer, *,
                    on_start: Callable[[Kernel, str], None] | None = None,
                    on_step: Callable[[str], None] | None = None,
                    human_prompt: Callable[[dict[str, Any]], Any] | None = None) -> Outcome:
    """Start a run with ``inputs`` and drive it under its lease."""
    init_schema(store)
    repo_goal.prepare(store, inputs.repo, settings.data_dir)
    kernel, root = start(store, inputs, proposer, settings.data_dir,
                         resolvers().sandbox.default_root(),
                         human_prompt=human_prompt, concurrency=settings.concurrency)
    with Lease(store, kernel.run.run_id) as lease:
        if on_start is not None:
            on_start(kernel, root)
        return _drive(kernel, root, lease, on_step, inputs.stop_after_intake)
