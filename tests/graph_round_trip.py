"""The export round trip the tests run after a shipped example: `kernel graph export`
exits 0, and the file imported into an empty graph of the same store exports the same
bytes. Called by the tests that already solve each example, so no example runs twice."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kernel.cli.app import app
from kernel.store import GraphStore
from tests.conftest import store_env


def _kernel(store: GraphStore, data_dir: Path, *args: str) -> None:
    done = CliRunner().invoke(app, list(args), env={**store_env(store, data_dir),
                                                    "COLUMNS": "200"})
    assert done.exit_code == 0, (args, done.output, done.exception)


def assert_export_round_trips(store: GraphStore, data_dir: Path, folder: Path,
                              into: GraphStore | None = None) -> list[str]:
    """Export ``store``, import the file into an emptied graph (``into``, or ``store``
    itself, which then holds what it held, imported back), export that: the same bytes.
    Returns the first file's lines."""
    first, second = folder / "graph.jsonl", folder / "graph-again.jsonl"
    _kernel(store, data_dir, "graph", "export", str(first))
    target = into if into is not None else store
    target.drop_all()
    _kernel(target, data_dir, "graph", "import", str(first))
    _kernel(target, data_dir, "graph", "export", str(second))
    assert first.read_bytes() == second.read_bytes(), "the round trip changed the file"
    return first.read_text(encoding="utf-8").splitlines()
