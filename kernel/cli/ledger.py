"""``kernel ledger``: verify and export a run's hash-chained proposal ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
    note = ""
    pending: tuple[LedgerEntry, ...] = ()
    if file is not None:
        problems = [str(p) for p in verify_file(input_file(file, '--file').read_bytes())]
        what, count = str(file), None
    elif run is not None:
        run_id = run_ref(ctx, run)
        with store_of(ctx) as store:
            head, size, entries = load_entries(store, run_id)
            inputs = "goal" in Run.load(store, run_id).config()
        problems = [str(p) for p in verify_chain(entries, head=head, size=size)]
        what, count = run_id, len(entries)
        if not inputs and not chain_only:
            chain_only = True  # a bare ledger: no inputs to rebuild the state from
            note = " (no recorded inputs: the chain only)"
        if not problems and not chain_only:
            from kernel.solve.session import replay

            result = replay(settings_of(ctx), run_id)
            problems = [f"tampered: {result.tampered}"] if result.tampered else \
                list(result.differences)
            pending = result.pending
    if as_json:
        print_json({"ledger": what, "entries": count, "intact": not problems,
                    "problems": problems, "state_checked": file is None and not chain_only,
                    "pending": [{"index": e.index, "kind": e.kind, "operation": e.operation,
                                 "goal_id": e.goal_id} for e in pending]})
        if problems:
            raise typer.Exit(1)
        return
    if problems:
        for problem in problems:
            typer.echo(f"{what}: {problem}", err=True)
        raise typer.Exit(1)
    state = "; the committed state is what it implies"
    if pending:
        state += (f"; {len(pending)} recorded proposal{'s' if len(pending) > 1 else ''} "
                  f"not yet committed: 'kernel resume {what}' applies "
                  f"{'them' if len(pending) > 1 else 'it'}")
    out.print(f"{what}: ledger intact" + (f" ({count} entries)" if count is not None else "")
              + (state if file is None and not chain_only else note))


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
