"""``kernel solve``, ``kernel resume``, ``kernel replay``: run the SOLVE loop."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kernel import api
from kernel.cli.answers import terminal_prompt
from kernel.cli.common import (
    amount,
    err_console,
    input_file,
    out,
    print_json,
    print_refusals,
    run_ref,
    settings_of,
    store_of,
)
from kernel.cli.plan import summarize
from kernel.cli.progress import (
    PROGRESS_HELP,
    LineView,
    LiveView,
    check_mode,
    make_view,
    showing,
)
from kernel.cli.shown import shown
from kernel.errors import ConfigError
from kernel.runtime.calls import check_concurrency, process_limit
from kernel.settings import KernelSettings
from kernel.solve.constraint_text import CONSTRAINT_HELP
from kernel.solve.suggestion_text import SUGGEST_HELP, parse_suggestion
from kernel.store.base import GraphStore

if TYPE_CHECKING:
    from kernel.protocol.suggestion_models import Suggestion
    from kernel.solve.dispatch import Outcome


def _prompt(interactive: bool, view: LiveView | LineView | None,
            ) -> Callable[[dict[str, Any]], Any] | None:
    """The terminal prompt for HIRE questions (the live view pauses while it asks)."""
    if not interactive:
        return None

    def ask(payload: dict[str, Any]) -> Any:
        if view is not None:
            view.pause()
        try:
            return terminal_prompt(payload)
        finally:
            if view is not None:
                view.resume()

    return ask


# Exit codes of solve and resume, so scripts can tell the outcomes apart.
EXIT_RESOLVED, EXIT_REFUSED, EXIT_UNFINISHED = 0, 1, 3


def report(store: GraphStore, outcome: Outcome, as_json: bool,
           save_to: tuple[Path, Path] | None = None,
           deliver_to: RepoDelivery | None = None) -> int:
    """Print the run's outcome (and, when it did not resolve, why) and return the exit code.
    With ``save_to`` (data dir, directory) a resolved run's final artifact is written there;
    with ``deliver_to``, a repository goal's patch and verification pack (or the patch
    applied to the working tree: refused, exit 1, when the tree changed since)."""
    data = api.outcome_report(store, outcome)
    resolved = outcome.status == "resolved"
    unfinished = not resolved and bool(outcome.waiting_on or outcome.stopped)
    code = EXIT_RESOLVED if resolved else EXIT_UNFINISHED if unfinished else EXIT_REFUSED
    if deliver_to is not None and resolved:
        code = _deliver(store, outcome, deliver_to, data) or code
    elif save_to is not None and data["final_artifact"]:
        try:
            saved, refused = _save_final(store, data["final_artifact"], *save_to)
            data["saved_files"], data["refused_files"] = [str(p) for p in saved], refused
        except ConfigError as exc:  # the run stands: say how to get its files later
            data["save_error"] = (f"{exc}; the run's files are stored: 'kernel artifact save "
                                  f"{data['final_artifact']} DIR' writes them")
    if as_json:
        print_json(data)
        return code
    out.print(f"run {outcome.run_id}: {outcome.status}"
              + (f", σ_system={outcome.sigma_system:.2f}" if outcome.sigma_system is not None
                 else "") + (f" (stopped: {outcome.stopped})" if outcome.stopped else ""))
    if data["final_artifact"]:
        out.print(f"final artifact {data['final_artifact']} (kernel artifact show "
                  f"{data['final_artifact']})", highlight=False)
    _print_saving(data, save_to)
    _print_candidates(data["weighed"])
    _print_reused(data["reused"])
    for request_id in outcome.waiting_on:
        out.print(f"parked: waiting on {request_id} (kernel hire list; kernel hire answer "
                  f"{request_id} ...)")
    if outcome.stopped == "intake confirmed":
        out.print(f"the goal is confirmed: solve it with kernel resume {outcome.run_id}")
    elif outcome.stopped:
        out.print(f"continue with: kernel resume {outcome.run_id}")
    print_refusals(data["refusals"])
    _note_unused_calls(outcome)
    out.print(f"summary hash {data['summary_hash']}")
    return code


@dataclass(frozen=True)
class RepoDelivery:
    """What ``--out`` and ``--apply`` ask of a repository goal's result."""

    settings: KernelSettings
    directory: Path | None
    apply: bool


def _deliver(store: GraphStore, outcome: Outcome, to: RepoDelivery, data: dict[str, Any]) -> int:
    """Write the patch and pack, apply the patch; EXIT_REFUSED when that was refused."""
    from kernel.solve.repo_delivery import deliver

    try:
        data["delivered"] = deliver(store, to.settings, outcome.run_id,
                                    api.root_goal(store, outcome.run_id), to.directory,
                                    to.apply)
    except ConfigError as exc:
        data["save_error"] = str(exc)
        return EXIT_REFUSED
    return 0


def _print_saving(data: dict[str, Any], save_to: tuple[Path, Path] | None) -> None:
    """What ``--out`` wrote, what it left out (files a tool would run on its own), or why
    it could not write."""
    if data.get("save_error"):
        err_console.print(f"error: {shown(data['save_error'], markup=True)}", highlight=False,
                          soft_wrap=True)
    delivered = data.get("delivered") or {}
    for path in delivered.get("written", []):
        out.print(f"wrote {path}", highlight=False)
    if delivered.get("applied_to"):
        out.print(f"applied the patch to {delivered['applied_to']}", highlight=False)
    if data.get("saved_files"):
        out.print(f"saved {len(data['saved_files'])} file(s) to {save_to[1] if save_to else ''}: "
                  + shown(", ".join(Path(p).name for p in data["saved_files"])), highlight=False)
    if data.get("refused_files"):
        from kernel.artifact_files import refused_note

        note = refused_note(data["refused_files"], data["final_artifact"])
        err_console.print(f"note: {shown(note, markup=True)}", highlight=False, soft_wrap=True)


def _print_candidates(candidates: list[dict[str, Any]]) -> None:
    """How the suggestions fared against the model's output, with each failure's trace."""
    if not candidates:
        return
    out.print(f"weighed {len(candidates)} candidates on merit (authors are not ranked):")
    for c in candidates:
        what = f"suggestion {c['suggestion']} by {c['author']}" if c["suggestion"] \
            else c["author"]
        out.print(f"  {c['rank']}. {shown(what, markup=True)}: {c['status']} ({c['verdict']}, "
                  f"σ_v={c['sigma_v']:.2f})", highlight=False)
        for v in c["violations"]:
            out.print(shown(f"       failed {v['constraint']!r}: {v['why']}", markup=True),
                      highlight=False,
                      soft_wrap=True)


def _print_reused(reused: list[dict[str, Any]]) -> None:
    """The earlier answers the run used instead of asking, and how to ask again."""
    if not reused:
        return
    out.print(f"reused {len(reused)} earlier answer(s) instead of asking again "
              "('kernel solve --fresh' asks every question again):", highlight=False)
    for r in reused:
        out.print(f"  {r['operation']} for {r['goal_id']}: from {r['from']}", highlight=False,
                  soft_wrap=True)


def _note_unused_calls(outcome: Outcome) -> None:
    """Calls started ahead that no step used were paid for outside the run's budget."""
    if outcome.calls_unused:
        err_console.print(
            f"note: {outcome.calls_unused} call(s) started ahead of their turn were not used "
            f"(${outcome.unused_cost_usd:.4f}, outside the run's budget; --concurrency 1 "
            "starts none)", highlight=False, soft_wrap=True)


def _save_final(store: GraphStore, artifact_id: str, data_dir: Path,
                directory: Path) -> tuple[list[Path], dict[str, str]]:
    """The files written, and those refused because a tool would run them on its own."""
    from kernel.artifact_files import artifact_files, load_artifact, save_files, split_autorun

    files, refused = split_autorun(artifact_files(*load_artifact(store, data_dir, artifact_id)))
    return save_files(files, directory), refused


def check_out_dir(directory: Path | None) -> None:
    """``--out DIR`` is checked before anything is stored or paid for: a new directory
    (its parent exists) or an empty one."""
    if directory is None:
        return
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"--out {directory} is a file: give a new or empty directory")
    if directory.is_dir() and any(directory.iterdir()):
        raise ConfigError(f"--out {directory} is not empty: give a new or empty directory")
    if not directory.exists() and not directory.parent.is_dir():
        raise ConfigError(f"--out {directory}: the directory {directory.parent} does not exist "
                          "(create it first)")
    place = directory if directory.exists() else directory.parent
    if not os.access(place, os.W_OK | os.X_OK):
        raise ConfigError(f"--out {directory}: {place} is not writable by this user: give a "
                          "directory you can write")


_OUT_HELP = "write the final artifact's files into this new or empty directory when resolved"


_INTAKE_HELP = ("start with step 1, the intake dialogue (default: on with --interactive); "
                "headless, its questions park the run (kernel hire list)")


# The options `kernel solve` and `kernel intake` share.
Constraints = Annotated[list[str] | None, typer.Option("--constraint", "-c", help=CONSTRAINT_HELP)]
Budget = Annotated[float, typer.Option(help="cost budget in USD")]
TimeLimit = Annotated[float, typer.Option("--time", help="time budget in seconds")]
ProposerKind = Annotated[str, typer.Option(help="auto | anthropic | scripted")]
ScriptFile = Annotated[Path | None, typer.Option(help="scripted proposals (YAML)")]
MaxAttempts = Annotated[int, typer.Option(help="T_max per goal")]
AsJson = Annotated[bool, typer.Option("--json", help="print the outcome as JSON")]
Progress = Annotated[str, typer.Option(help=PROGRESS_HELP)]
Suggest = Annotated[list[str] | None, typer.Option("--suggest", help=SUGGEST_HELP)]
Concurrency = Annotated[int | None, typer.Option(
    help="calls (model calls, sandbox runs) in flight at once: the goals behind the one "
         "taking its step start their next calls early; what the run commits is the same "
         "at any value (default: KERNEL_CONCURRENCY, 4)")]
Fresh = Annotated[bool, typer.Option(
    "--fresh", help="ask every question again: no answer given before in this graph (an "
                    "identification, a byte-identical request) is reused")]
SuggestedBy = Annotated[str | None, typer.Option(
    help="the name recorded with the suggestions (default: your login name); never used "
         "to rank them")]


def solve_command(
    ctx: typer.Context,
    goal: Annotated[str, typer.Argument(help="the goal, in words")],
    constraint: Constraints = None,
    budget: Budget = 5.0,
    time_limit: TimeLimit = 600,
    proposer: ProposerKind = "auto",
    script: ScriptFile = None,
    max_attempts: MaxAttempts = 5,
    max_wall: Annotated[float, typer.Option(help="hard wall-time cap in seconds")] = 600,
    interactive: Annotated[bool, typer.Option(
        help="ask the intake's and HIRE's questions in the terminal instead of parking "
             "the goal")] = False,
    intake: Annotated[bool | None, typer.Option("--intake/--no-intake", help=_INTAKE_HELP)] = None,
    as_json: AsJson = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help=_OUT_HELP)] = None,
    progress: Progress = "auto",
    suggest: Suggest = None,
    suggested_by: SuggestedBy = None,
    concurrency: Concurrency = None,
    fresh: Fresh = False,
    repo: Annotated[Path | None, typer.Option(
        help="the repository GOAL changes: its snapshot (git's files) is the run's input, "
             "the output hash-anchored edits verified by its own tests; --out writes the "
             "patch (docs/repositories.md)")] = None,
    test_cmd: Annotated[str | None, typer.Option(
        help="with --repo: the command that runs the repository's tests in the sandbox, "
             "its exit status deciding (default: pytest on its test files)")] = None,
    apply: Annotated[bool, typer.Option(
        "--apply", help="with --repo: write the patch into the repository's working tree, "
                        "refused when the tree changed since the run's snapshot")] = False,
) -> None:
    """Solve GOAL: constraints, resolvers, verification, decomposition, until done or refused.

    Exit code: 0 resolved, 1 refused (infeasible, gated), 2 bad input (nothing stored or
    paid for), 3 unfinished and resumable (waiting on a person, or stopped by the
    wall-time cap), 4 an internal error (a bug: its traceback is in the data dir's logs)."""
    check_out_dir(out_dir)
    if (apply or test_cmd is not None) and repo is None:
        raise ConfigError(f"{'--apply' if apply else '--test-cmd'} is for a repository "
                          "goal: give --repo PATH too")
    request = _request(goal, constraint, budget, time_limit, proposer, script, max_attempts,
                       max_wall, interactive if intake is None else intake, progress,
                       _suggestions(suggest, suggested_by), fresh, repo, test_cmd)
    _start(ctx, request, interactive, as_json, out_dir, progress, stop_after_intake=False,
           concurrency=concurrency, apply=apply)


def intake_command(
    ctx: typer.Context,
    goal: Annotated[str, typer.Argument(help="the goal, in your own words")],
    constraint: Constraints = None,
    budget: Budget = 5.0,
    time_limit: TimeLimit = 600,
    proposer: ProposerKind = "auto",
    script: ScriptFile = None,
    max_attempts: MaxAttempts = 5,
    headless: Annotated[bool, typer.Option(
        help="never ask in the terminal: park on the first question (kernel hire list)")] = False,
    as_json: AsJson = False,
    progress: Progress = "auto",
    suggest: Suggest = None,
    suggested_by: SuggestedBy = None,
) -> None:
    """Step 1 only: turn GOAL into a confirmed root goal and core constraints, asking in
    the terminal (or parking on the question when there is none), then stop;
    'kernel resume RUN' solves the confirmed goal.

    Exit code: 3 (confirmed or waiting on the person; resumable), 1 rejected."""
    request = _request(goal, constraint, budget, time_limit, proposer, script, max_attempts,
                       600, True, progress, _suggestions(suggest, suggested_by))
    interactive = not headless and sys.stdin.isatty()
    _start(ctx, request, interactive, as_json, None, progress, stop_after_intake=True)


def _request(goal: str, constraint: list[str] | None, budget: float, time_limit: float,
             proposer: str, script: Path | None, max_attempts: int, max_wall: float,
             intake: bool, progress: str,
             suggestions: list[Suggestion], fresh: bool = False,
             repo: Path | None = None, test_cmd: str | None = None) -> api.SolveRequest:
    """The run's inputs, checked before anything is stored or paid for."""
    amount(budget, "--budget")
    amount(time_limit, "--time")
    check_mode(progress)
    request = api.SolveRequest.checked(
        goal=goal, constraints=constraint or [], budget_usd=budget, time_seconds=time_limit,
        proposer=proposer, script=script, max_attempts=max_attempts, max_wall_seconds=max_wall,
        intake=intake, suggestions=suggestions, fresh=fresh, repo=repo, test_cmd=test_cmd)
    for note in request.implied_core():
        err_console.print(f"[yellow]note:[/] {note}", highlight=False, soft_wrap=True)
    return request


def with_concurrency(settings: KernelSettings, concurrency: int | None) -> KernelSettings:
    """The settings with ``--concurrency`` in place of KERNEL_CONCURRENCY, when given;
    a bound a run cannot use is said before anything starts."""
    process_limit()
    if concurrency is None:
        return settings
    return settings.model_copy(update={"concurrency": check_concurrency(concurrency)})


def _suggestions(given: list[str] | None, author: str | None) -> list[Suggestion]:
    """``--suggest`` values as candidates by ``author`` (default: the login name)."""
    if not given:
        if author is not None:
            raise ConfigError("--suggested-by names who offered --suggest values: give at "
                              "least one --suggest, or leave it out")
        return []
    if author is None:
        import getpass

        author = getpass.getuser()
    return [parse_suggestion(text, author) for text in given]


def _start(ctx: typer.Context, request: api.SolveRequest, interactive: bool, as_json: bool,
           out_dir: Path | None, progress: str, stop_after_intake: bool,
           concurrency: int | None = None, apply: bool = False) -> None:
    settings = with_concurrency(settings_of(ctx), concurrency)
    delivery = RepoDelivery(settings, out_dir, apply) if request.repo is not None else None
    with store_of(ctx) as store:
        with showing(make_view(progress, store, as_json)) as view:
            outcome = api.solve(
                store, request, settings,
                on_start=view.started if view else None,
                on_step=view.step if view else None,
                human_prompt=_prompt(interactive, view), stop_after_intake=stop_after_intake)
        code = report(store, outcome, as_json,
                      (settings.data_dir, out_dir) if out_dir is not None else None, delivery)
    raise typer.Exit(code)


def resume_command(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="run id, a unique prefix, or latest")],
    interactive: Annotated[bool, typer.Option(
        help="ask HIRE questions in the terminal instead of parking the goal")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the outcome as JSON")] = False,
    out_dir: Annotated[Path | None, typer.Option("--out", help=_OUT_HELP)] = None,
    max_wall: Annotated[float | None, typer.Option(
        help="wall-time cap in seconds for this stretch (default: the run's own)")] = None,
    progress: Progress = "auto",
    concurrency: Concurrency = None,
    fresh: Fresh = False,
) -> None:
    """Continue a run that stopped (a crash, a cap, a parked HIRE) from its committed state;
    a planning run plans on, served what it had already recorded.

    Exit code: as for ``kernel solve``."""
    check_out_dir(out_dir)
    if max_wall is not None:
        amount(max_wall, "--max-wall")
    check_mode(progress)
    run_id = run_ref(ctx, run_id)
    from kernel.plan.session import is_planning_run, resume_plan
    from kernel.solve.session import resume

    settings = with_concurrency(settings_of(ctx), concurrency)
    with store_of(ctx) as store:
        if is_planning_run(store, run_id):
            document = resume_plan(store, settings.data_dir, run_id)
        else:
            with showing(make_view(progress, store, as_json, run_id)) as view:
                outcome = resume(store, run_id, settings.data_dir,
                                 on_step=view.step if view else None,
                                 human_prompt=_prompt(interactive, view),
                                 max_wall_seconds=max_wall,
                                 concurrency=settings.concurrency, fresh=fresh)
            raise typer.Exit(report(store, outcome, as_json,
                                    (settings.data_dir, out_dir) if out_dir else None))
    if as_json:
        print_json(document)
    else:
        summarize(document)


def replay_command(
    ctx: typer.Context,
    run_id: Annotated[str, typer.Argument(help="run id, a unique prefix, or latest")],
    ledger: Annotated[Path | None, typer.Option(
        "--ledger", help="replay an exported ledger file instead of the graph's")] = None,
) -> None:
    """Re-run a recorded run with its recorded proposals; the summary hash must match."""
    if ledger is not None:
        input_file(ledger, "--ledger")
    run_id = run_ref(ctx, run_id)
    from kernel.solve.session import replay

    result = replay(settings_of(ctx), run_id, ledger)
    if result.tampered:
        typer.echo(f"{run_id}: the ledger was tampered with: {result.tampered}", err=True)
        raise typer.Exit(1)
    for difference in result.differences:
        typer.echo(f"{run_id}: {difference}", err=True)
    if result.divergence:
        typer.echo(f"{run_id}: replay diverged: {result.divergence}", err=True)
        raise typer.Exit(1)
    if not result.identical:
        typer.echo(f"{run_id}: replay reached a different state: summary hash "
                   f"{result.replay_hash} != {result.original_hash}", err=True)
        raise typer.Exit(1)
    out.print(f"{run_id}: replay identical (summary hash {result.original_hash})")
