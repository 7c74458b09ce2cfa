"""Starting a planning run: the goal, a planning budget, proposals from a script, an
example, or Claude."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kernel.core.lease import Lease
from kernel.core.run import Run
from kernel.errors import ConfigError
from kernel.paths import seeds_dir
from kernel.plan.compose import PlanRefused
from kernel.plan.examples import example_names
from kernel.plan.planner import Planning, make_plan
from kernel.protocol import Proposer
from kernel.runtime.inputs import RunInputs
from kernel.runtime.installed import resolvers
from kernel.runtime.kernel import Kernel, SolveConfig
from kernel.runtime.proposers import proposer_from
from kernel.runtime.start import finish_start, start
from kernel.schema import init_schema
from kernel.store.base import GraphStore

EXAMPLES = seeds_dir() / "examples"


def example_script(name: str) -> Path:
    """The shipped example's file, chosen from the list (a name is never a path)."""
    names = example_names()
    if name not in names:
        shown = repr(name[:60] + ("…" if len(name) > 60 else ""))
        raise ConfigError(f"no example {shown}; the examples are: {', '.join(names)}")
    return EXAMPLES / f"{name}.plan.yaml"


def example_goal(path: Path) -> tuple[str, list[dict[str, Any]]]:
    goal, verifications = script_goal(path)
    if goal is None:
        raise ConfigError(f"{path} is a script without an example goal")
    return goal, verifications


def script_goal(path: Path) -> tuple[str | None, list[dict[str, Any]]]:
    """The goal and the verification list a planning script carries under ``example:``
    (a user's script as much as a shipped one); an unknown check is bad input, refused
    before anything is paid for."""
    from kernel.plan.check_verifications import VERIFICATIONS, verification_problem

    script = resolvers().load_script(path)
    example = script.example
    if example is None:
        return None, []
    planned = [c for e in script.proposals if e.operation == "plan_constraints"
               for c in e.output.get("constraints") or []]
    for number, check in enumerate(example.verifications):
        if check.get("check") not in VERIFICATIONS:
            raise ConfigError(
                f"{path}: example.verifications.{number}.check: {check.get('check')!r} is "
                f"not a verification; use one of {', '.join(sorted(VERIFICATIONS))} "
                "(docs/planning.md)")
        problem = verification_problem(check, planned)
        if problem:
            raise ConfigError(f"{path}: example.verifications.{number}: {problem}")
    return example.goal, list(example.verifications)


def plan_goal(store: GraphStore, data_dir: Path, goal: str, proposer: Proposer,
              proposer_config: dict[str, Any], budget_usd: float, time_seconds: float,
              verifications: list[dict[str, Any]] | None = None,
              max_wall_seconds: float = 600.0) -> dict[str, Any]:
    init_schema(store)
    inputs = RunInputs(goal=goal, budget_usd=budget_usd, time_seconds=time_seconds,
                       max_attempts=5, core=[], solve=SolveConfig(max_wall_seconds=max_wall_seconds),
                       mode="plan", **proposer_config)
    kernel, root = start(store, inputs, proposer, data_dir, resolvers().sandbox.default_root())
    with Lease(store, kernel.run.run_id) as lease:
        return _plan(kernel, root, verifications, lease)


def _plan(kernel: Planning, root: str, verifications: list[dict[str, Any]] | None,
          lease: Lease) -> dict[str, Any]:
    try:
        document = make_plan(kernel, root, verifications)
    except PlanRefused:
        lease.stopped, lease.ended = "plan refused", True  # an interruption is no end
        raise
    finally:
        kernel.run.flush()
    # a plan whose constraints no surveyed choice meets ends refused, as in solve
    lease.stopped, lease.ended = ("plan refused" if document.get("refusal") else "planned"), True
    return document


def resume_plan(store: GraphStore, data_dir: Path, run_id: str,
                proposer: Proposer | None = None) -> dict[str, Any]:
    """Continue a planning run: planning again from the start, served every proposal the
    run recorded (their spends are already committed, and a spend is paid once per
    proposal), then asking for the rest."""
    Run.load(store, run_id)
    with Lease(store, run_id) as lease:
        run = Run.load(store, run_id)
        inputs = RunInputs.of_run(run)
        if proposer is None:
            proposer = proposer_from(inputs)
        verifications = recorded_verifications(inputs)
        run.proposals = 0  # planning keeps no step state: it asks again from the first
        kernel = Kernel.build(run, proposer, data_dir, resolvers().sandbox.default_root(), inputs.solve,
                              reuse=not inputs.fresh)
        root = finish_start(kernel, inputs)
        return _plan(kernel, root, verifications, lease)


def recorded_verifications(inputs: RunInputs) -> list[dict[str, Any]]:
    """The checks of the shipped example a planning run was started from (none when its
    proposals came from anywhere else)."""
    if inputs.proposer != "scripted" or inputs.script is None:
        return []
    example = resolvers().load_script(Path(inputs.script)).example
    return list(example.verifications) if example is not None else []


def is_planning_run(store: GraphStore, run_id: str) -> bool:
    return Run.load(store, run_id).config().get("mode") == "plan"
