"""``kernel repo ingest PATH`` and ``kernel repo impact SYMBOL``: a codebase as a graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kernel.cli.common import out, print_json, print_table, settings_of, store_of
from kernel.cli.shown import escape

app = typer.Typer(help="A codebase as a graph: take a repository in, ask what a change "
                       "impacts.", no_args_is_help=True)

_PATH = typer.Option("--path", help="the ingested repository (default: the current directory)")


@app.command("ingest")
def ingest_command(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="the repository's top directory")],
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """Take the files git tracks (and untracked ones it does not ignore) into the graph:
    files, chunks of large files, Python symbols, imports, calls and tests. Again, only
    the files whose content changed are read into the graph and parsed."""
    from kernel.codebase.ingest import caps_of, ingest_snapshot
    from kernel.codebase.snapshot import take_snapshot
    from kernel.codebase.symbol_search import code_encoder
    from kernel.schema import init_schema

    settings = settings_of(ctx)
    snapshot = take_snapshot(path, caps_of(settings))  # refused before the store opens
    with store_of(ctx) as store:
        init_schema(store)
        report = ingest_snapshot(store, snapshot, code_encoder(settings.data_dir))
    if as_json:
        print_json(report.as_dict())
        return
    out.print(f"{escape(report.root)}: {report.seen} files seen, {report.changed} changed, "
              f"{report.parsed} parsed, {report.removed} removed, {report.embedded} "
              f"symbols embedded; tree "
              f"{report.tree_hash[:16]}", highlight=False)


@app.command("impact")
def impact_command(
    ctx: typer.Context,
    symbol: Annotated[str, typer.Argument(
        help="a qualified name (package.module.function), a dotted suffix, or a bare name")],
    path: Annotated[Path, _PATH] = Path("."),
    depth: Annotated[int, typer.Option(help="how many calls away to follow", min=1)] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """The functions that depend on SYMBOL (its callers, transitively), the files that
    import them, and the tests that cover them."""
    from kernel.codebase.impact import impact, ingested_repo

    with store_of(ctx) as store:
        found = impact(store, ingested_repo(store, path), symbol, depth)
    if as_json:
        print_json(found.as_dict())
        return
    print_table(f"changing {symbol}", ["depth", "symbol", "kind", "where"],
                [["0", s["qname"], s["kind"], f"{s['file']}:{s['line']}"] for s in found.changed]
                + [[str(d["depth"]), d["qname"], d["kind"], f"{d['file']}:{d['line']}"]
                   for d in found.dependents])
    print_table("tests that cover it", ["test", "where"],
                [[t["qname"], f"{t['file']}:{t['line']}"] for t in found.tests])


@app.command("related")
def related_command(
    ctx: typer.Context,
    goal: Annotated[str, typer.Argument(help="what you want done, in words")],
    path: Annotated[Path, _PATH] = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """The files and symbols GOAL names, and the symbols nearest to it by meaning (the
    vector index over their names and docstrings)."""
    from kernel.codebase.impact import ingested_repo, related
    from kernel.codebase.symbol_search import code_encoder, near_goal

    with store_of(ctx) as store:
        repo = ingested_repo(store, path)
        rows = related(store, repo, goal)
        near = near_goal(store, repo, code_encoder(settings_of(ctx).data_dir), goal)
    if as_json:
        print_json({"named_by_goal": rows, "near_goal": near})
        return
    print_table("named by the goal", ["kind", "name", "where"],
                [[r["kind"], r["name"], f"{r['file']}:{r['line']}"] for r in rows])
    print_table("nearest by meaning", ["symbol", "where", "similarity"],
                [[r["name"], f"{r['file']}:{r['line']}", f"{r['similarity']:.4f}"]
                 for r in near])
