"""``kernel analytics [NAME]``: the named queries in cypher/analytics/, run as-is.

They are plain read-only Cypher, so the same files paste into Neo4j Browser unchanged;
a query with filters (``failure_modes``: run, time window, proposer) takes them as
parameters, null meaning no filter."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from kernel import api
from kernel.cli.common import out, print_json, print_table, store_of
from kernel.errors import ConfigError

RECORDED_PROPOSERS = ("scripted", "anthropic")  # the kinds a run records (Run.proposer)


def analytics_command(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="an analytics query (none: list them)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print as JSON")] = False,
    run: Annotated[str | None, typer.Option("--run", help="only this run's attempts")] = None,
    since: Annotated[str | None, typer.Option(
        "--since", help="only runs started at or after this ISO date or time (UTC unless it says)")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", help="only runs started before this ISO date or time")] = None,
    proposer: Annotated[str | None, typer.Option(
        "--proposer", help="only runs proposed by: scripted | anthropic")] = None,
) -> None:
    """Run a named analytics query (failure modes, retries, cost, HIRE, build reuse, σ)."""
    with store_of(ctx) as store:
        if name is None:
            available = api.analytics_queries(store)
            if as_json:
                print_json(available)
            else:
                print_table("analytics", ["name", "what it answers"],
                            [[n, d] for n, d in available.items()])
            return
        rows = api.analytics_rows(store, name, {
            "run_id": run, "since": _instant("--since", since),
            "until": _instant("--until", until), "proposer": _proposer(proposer)})
    if as_json:
        print_json(rows)
    elif rows:
        print_table(name, list(rows[0]), [list(r.values()) for r in rows])
    else:
        out.print(f"{name}: no rows yet")


def _instant(option: str, value: str | None) -> str | None:
    """An ISO date or time, normalized to the form runs record their start in (UTC)."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ConfigError(f"{option} {value!r} is not an ISO date or time; "
                          f"write e.g. 2026-11-24 or 2026-11-24T09:30") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="milliseconds")


def _proposer(value: str | None) -> str | None:
    if value is not None and value not in RECORDED_PROPOSERS:
        raise ConfigError(f"--proposer {value!r} is not one of {', '.join(RECORDED_PROPOSERS)}")
    return value
