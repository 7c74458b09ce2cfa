"""``kernel ledger``: verify and export a run's hash-chained proposal ledger."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from kernel.cli.common import (
    input_file,
    out,
    output_file,
    print_json,
    run_ref,
    settings_of,
    store_of,
    to_stdout,
    write_output,
)
from kernel.core.ledger import (
    LedgerEntry,
    dump_entries,
    load_entries,
    verify_chain,
    verify_file,
)
from kernel.core.run import Run
from kernel.errors import KernelError

app = typer.Typer(help="The hash-chained ledger of proposals.", no_args_is_help=True)


@app.command()
def verify(
    ctx: typer.Context,
    run: Annotated[str | None, typer.Argument(
        help="run id (a unique prefix, or latest), to verify the ledger in the graph")] = None,
    file: Annotated[Path | None, typer.Option("--file", help="verify an exported ledger file")]
    = None,
    chain_only: Annotated[bool, typer.Option(
        "--chain-only", help="check the hash chain only, not the committed state")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the verdict as JSON")] = False,
) -> None:
    """Check the ledger's hash chain (any altered, missing or reordered entry) and, for a
    RUN, that its committed goals, attempts, spends and budget events are what the ledger
    implies (the run replayed from it in a scratch graph). Exit 1 naming what differs.

    A run stopped between recording proposals and committing what they decide (a kill -9,
    an export taken mid-run) is intact with those proposals pending: `kernel resume`
    applies them. Only what no resume can explain is a mismatch."""
    if (run is None) == (file is None):
        raise KernelError("give a RUN id or --file FILE (one of them)")
    if file is not None:
        problems = [str(p) for p in verify_file(input_file(file, '--file').read_bytes())]
        verdict = Verdict(str(file), None, problems)
    else:
        verdict = _verify_run(ctx, run_ref(ctx, str(run)), chain_only)
    if as_json:
        print_json(verdict.as_json())
    elif verdict.problems:
        for problem in verdict.problems:
            typer.echo(f"{verdict.what}: {problem}", err=True)
    else:
        out.print(verdict.line())
    if verdict.problems:
        raise typer.Exit(1)


@dataclass
class Verdict:
    """What ``kernel ledger verify`` found for one ledger."""

    what: str  # the run id, or the file
    count: int | None  # entries in the graph's ledger (None for a file)
    problems: list[str]
    state_checked: bool = False  # the committed state was compared with a replay
    note: str = ""
    pending: tuple[LedgerEntry, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"ledger": self.what, "entries": self.count, "intact": not self.problems,
                "problems": self.problems, "state_checked": self.state_checked,
                "pending": [{"index": e.index, "kind": e.kind, "operation": e.operation,
                             "goal_id": e.goal_id} for e in self.pending]}

    def line(self) -> str:
        said = f"{self.what}: ledger intact" + (f" ({self.count} entries)"
                                                if self.count is not None else "")
        if not self.state_checked:
            return said + self.note
        said += "; the committed state is what it implies"
        if self.pending:
            many = len(self.pending) > 1
            said += (f"; {len(self.pending)} recorded proposal{'s' if many else ''} not yet "
                     f"committed: 'kernel resume {self.what}' applies {'them' if many else 'it'}")
        return said


def _verify_run(ctx: typer.Context, run_id: str, chain_only: bool) -> Verdict:
    with store_of(ctx) as store:
        head, size, entries = load_entries(store, run_id)
        inputs = "goal" in Run.load(store, run_id).config()
    verdict = Verdict(run_id, len(entries),
                      [str(p) for p in verify_chain(entries, head=head, size=size)])
    if chain_only or verdict.problems:
        return verdict
    if not inputs:  # a bare ledger: no inputs to rebuild the state from
        verdict.note = " (no recorded inputs: the chain only)"
        return verdict
    from kernel.solve.session import replay

    result = replay(settings_of(ctx), run_id)
    verdict.problems = [f"tampered: {result.tampered}"] if result.tampered else \
        list(result.differences)
    verdict.state_checked, verdict.pending = True, result.pending
    return verdict


@app.command("export")
def export(
    ctx: typer.Context,
    run: Annotated[str, typer.Argument(help="run id, a unique prefix, or latest")],
    file: Annotated[Path, typer.Argument(
        help="file to write (JSON Lines; '-' for standard output)")],
) -> None:
    """Write a run's ledger to FILE, one canonical entry per line."""
    output_file(file, "ledger file")
    run_id = run_ref(ctx, run)
    with store_of(ctx) as store:
        _, _, entries = load_entries(store, run_id)
    write_output(file, dump_entries(entries))
    if not to_stdout(file):
        out.print(f"wrote {len(entries)} entries to {file}")
