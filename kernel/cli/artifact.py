"""``kernel artifact``: read an artifact, or write its files where a person wants them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kernel.cli.common import out, print_json, settings_of, store_of
from kernel.cli.shown import shown

app = typer.Typer(help="Artifacts out of the store: show one, or save its files.",
                  no_args_is_help=True)

_ID_HELP = ("an artifact id or a unique prefix of one; a run (run id, prefix, or latest) "
            "means its final artifact")


@app.command("show")
def show(
    ctx: typer.Context,
    artifact: Annotated[str, typer.Argument(help=_ID_HELP)],
    as_json: Annotated[bool, typer.Option(
        "--json", help="metadata, lineage and the text as JSON")] = False,
) -> None:
    """Print an artifact's text (a resolver's output: its main text; the files it holds are
    listed), or with --json its metadata, lineage and files."""
    from kernel.artifact_files import artifact_files, artifact_text

    record, data = _load(ctx, artifact)
    if as_json:
        files = artifact_files(record, data)
        print_json({**_public(record),
                    "files": {path: content.decode("utf-8", errors="replace")
                              for path, content in files.items()}})
        return
    text = shown(artifact_text(record, data), multiline=True)
    typer.echo(text, nl=not text.endswith("\n"))
    names = sorted(artifact_files(record, data))
    if len(names) > 1:
        typer.echo(f"files: {shown(', '.join(names))} (kernel artifact save {record['id']} DIR)",
                   err=True)


@app.command("save")
def save(
    ctx: typer.Context,
    artifact: Annotated[str, typer.Argument(help=_ID_HELP)],
    directory: Annotated[Path, typer.Argument(help="directory to write the files into "
                                                   "(created if missing)")],
    force: Annotated[bool, typer.Option("--force", help="replace files that exist")] = False,
    allow_autorun: Annotated[bool, typer.Option(
        "--allow-autorun", help="also write files that tools run on their own (conftest.py, "
                                "*.pth, .git/, editor and hook settings)")] = False,
) -> None:
    """Write an artifact's files under DIRECTORY (a resolver's code as main.py beside its
    tests, laid out as the sandbox ran them). Files a tool would run on its own there
    (conftest.py, *.pth, .git/, .vscode/, .envrc, ...) are left out and named, unless
    --allow-autorun."""
    from kernel.artifact_files import artifact_files, refused_note, save_files, split_autorun

    record, data = _load(ctx, artifact)
    every = artifact_files(record, data)
    files, refused = (every, {}) if allow_autorun else split_autorun(every)
    written = save_files(files, directory, overwrite=force)
    for path in written:
        out.print(shown(path, markup=True), highlight=False)
    out.print(f"saved {len(written)} file(s) of {record['id']} to {directory}", highlight=False)
    if refused:
        typer.echo(shown(refused_note(refused, record["id"])), err=True)


def _load(ctx: typer.Context, text: str) -> tuple[dict[str, Any], bytes]:
    from kernel.artifact_files import load_artifact

    with store_of(ctx) as store:
        return load_artifact(store, settings_of(ctx).data_dir, final_or_artifact(store, text))


def final_or_artifact(store: Any, text: str) -> str:
    """An artifact id from what was typed: the artifact itself (id or unique prefix), or
    a run's final one (``run:`` id, a prefix of a run id, or ``latest``: the newest run
    that has a final artifact)."""
    from kernel.errors import ConfigError
    from kernel.lookup import latest_with_final_artifact, resolve_id, resolve_run

    typed = text.strip()
    if typed.lower() == "latest":
        return _final_artifact(store, latest_with_final_artifact(store))
    if typed.startswith("run:"):
        return _final_artifact(store, resolve_run(store, typed))
    try:
        return resolve_id(store, typed, "Artifact")
    except ConfigError as not_an_artifact:
        if "several" in str(not_an_artifact) or typed.startswith("artifact:"):
            raise
        try:
            run_id = resolve_id(store, typed, "Run")
        except ConfigError:
            raise ConfigError(f"no artifact {typed!r} in this graph, nor a run it names (see "
                              "kernel runs, kernel log RUN)") from None
    return _final_artifact(store, run_id)


def _final_artifact(store: Any, run_id: str) -> str:
    from kernel._views import root_goal
    from kernel.errors import ConfigError

    goal = root_goal(store, run_id)
    if not goal.get("final_artifact_id"):
        raise ConfigError(f"{run_id} has no final artifact (status "
                          f"{goal.get('status', 'unknown')}): see kernel status {run_id}")
    return str(goal["final_artifact_id"])


def _public(record: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "goal_id", "type", "format", "sha256", "size_bytes", "sigma", "uri",
            "metadata", "lineage")
    return {key: record.get(key) for key in keep}
