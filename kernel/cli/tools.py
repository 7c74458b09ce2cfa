"""``kernel tools [show ID]``: the library of tools the kernel built or a person supplied."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.syntax import Syntax

from kernel.cli.common import as_shown, id_table, node_ref, out, print_json, settings_of, store_of
from kernel.cli.shown import escape

app = typer.Typer(help="The tools the kernel built or a person supplied: what each provides, "
                       "who made it, how it fared.", invoke_without_command=True)


@app.callback()
def list_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """Every built or supplied tool: capabilities, origin, uses, pass rate, replacements."""
    if ctx.invoked_subcommand is not None:
        return
    from kernel.lookup import unique_prefixes
    from kernel.tool_library import library

    with store_of(ctx) as store:
        tools = library(store)
        short = as_shown(unique_prefixes(store, "Resolver", [t["id"] for t in tools]))
    if as_json:
        print_json(tools)
        return
    if not tools:
        out.print("no built or supplied tools yet: BUILD and HIRE add them")
        return
    table = id_table("tool", "provides", "origin", "made by", "uses", "pass rate", "replaces",
                     "replaced by")
    for t in tools:
        rate = "-" if t["pass_rate"] is None else f"{t['pass_rate']:.0%}"
        table.add_row(escape(short[t["id"]]), escape(", ".join(t["provides"])), escape(t["origin"]),
                      escape(", ".join(t["made_by"] or t["answers"])), str(t["uses"]), rate,
                      escape(", ".join(t["replaces"])), escape(", ".join(t["replaced_by"])))
    out.print(table)
    out.print("its code and checks: kernel tools show ID")


@app.command("show")
def show_command(
    ctx: typer.Context,
    tool: Annotated[str, typer.Argument(help="the tool's id (resolver:...) or a unique prefix")],
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
) -> None:
    """One tool: its record, its code, and the checks its code passed when it was made."""
    from kernel.tool_library import tool_detail

    tool_id = node_ref(ctx, tool, "Resolver")
    with store_of(ctx) as store:
        shown = tool_detail(store, settings_of(ctx).data_dir, tool_id)
    if as_json:
        print_json(shown)
        return
    out.rule(escape(f"{shown['id']} — {shown['label'] or ''}"))
    for key in ("origin", "kind", "provides", "made_by", "answers", "built_for", "parts",
                "replaces", "replaced_by", "uses", "passed", "failed", "pass_rate",
                "code_artifact"):
        value = shown[key]
        text = ", ".join(value) if isinstance(value, list) else str(value)
        out.print(f"[bold]{key}[/]: {escape(text or '-')}", highlight=False)
    for made in shown["checks"]:
        passed = sum(1 for c in made["checks"] if c["passed"])
        out.print(f"[bold]checked[/] by {escape(made['attempt'])}: {made['verdict']} "
                  f"({passed} of {len(made['checks'])} checks passed)", highlight=False)
    if shown["code"] is not None:
        out.print(Syntax(shown["code"], "python", line_numbers=True))
