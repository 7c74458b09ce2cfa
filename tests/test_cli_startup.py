"""The ``kernel`` command starts without importing its subcommands: the top-level help
lists each from one line kept beside its module, and a command loads only its own."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernel.cli.app import _Commands, app, command

ROOT = Path(__file__).resolve().parents[1]
KERNEL = [sys.executable, "-c", "from kernel.cli.app import main; main()"]


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # the process ended while we looked
        return b""


def _first_paragraph(text: str) -> str:
    """What the top-level help shows of a command's help (as typer's rich help does)."""
    return " ".join(inspect.cleandoc(text).split("\n\n")[0].split())


@pytest.mark.parametrize("name", list(_Commands.lazy))
def test_each_listed_line_is_the_one_the_command_itself_shows(name: str) -> None:
    loaded = _Commands(name="kernel").load(name)
    assert loaded.name == name
    assert _first_paragraph(_Commands.lazy[name].summary) == _first_paragraph(
        loaded.short_help or loaded.help or ""), f"update the line for {name!r} in app.py"


def test_the_top_level_help_lists_every_command_and_imports_none(tmp_path: Path) -> None:
    probe = ("import sys\nfrom kernel.cli.app import main\nsys.argv = ['kernel', '--help']\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.startswith(('kernel.cli.', 'kernel.api',"
             " 'kernel.store', 'pydantic'))), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          cwd=ROOT, check=True, env={**os.environ, "COLUMNS": "200",
                                                     "KERNEL_DATA_DIR": str(tmp_path)})
    loaded = eval(done.stderr.strip().splitlines()[-1])  # a printed list of names
    assert loaded == ["kernel.cli.app", "kernel.cli.common", "kernel.cli.conventions",
                      "kernel.cli.lazy"]
    for name, entry in _Commands.lazy.items():
        assert f" {name} " in done.stdout
        assert entry.summary.split()[0] in done.stdout
    assert not (tmp_path / "falkordb.sock").exists()  # nor did it start the store


def test_a_command_loads_its_own_module_only() -> None:
    group = command()
    assert "status" not in group.commands
    status = group.get_command(None, "status")
    assert status is not None and set(group.commands) == {"status"}
    assert group.get_command(None, "status") is status  # built once
    assert group.get_command(None, "no-such-command") is None


def test_a_mistyped_command_is_named_with_the_nearest_ones() -> None:
    done = subprocess.run([*KERNEL, "statsu"], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 2
    assert "No such command 'statsu'. Did you mean 'status'?" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_lazily_loaded_group_keeps_its_help_and_options(data_dir: Path) -> None:
    result = CliRunner().invoke(app, ["db", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "Schema and store management." in result.output
    assert " init " in result.output
    done = subprocess.run([*KERNEL, "status", "--json", "--data-dir", str(data_dir)],
                          capture_output=True, text=True, cwd=ROOT, check=True,
                          env={**os.environ, "KERNEL_GRAPH": "embedded"})
    assert json.loads(done.stdout)["store"]["backend"].startswith("embedded")


@pytest.mark.slow
def test_the_start_up_bench_times_each_command_beside_its_libraries(data_dir: Path) -> None:
    done = subprocess.run([*KERNEL, "bench", "startup", "--samples", "1", "--solves", "1",
                           "--json"],
                          capture_output=True, text=True, cwd=ROOT, check=True,
                          env={**os.environ, "KERNEL_DATA_DIR": str(data_dir),
                               "KERNEL_GRAPH": "embedded"})
    figures = {f["name"]: f["value"] for f in json.loads(done.stdout)["figures"]}
    for name in ("kernel --help", "kernel status", "kernel runs"):
        assert figures[f"{name}, median"] > figures["bare interpreter, median"] > 0
        assert figures[f"{name} / import of the libraries (medians)"] > 0
    assert figures["import of the libraries, median"] > 0
    solve = figures["ingest example, scripted, fresh data dir, median"]
    assert solve > figures["kernel status, median"]
    imports = [name for name in figures if name.startswith("kernel solve (ingest example) imports ")]
    assert 0 < len(imports) <= 5 and not [n for n in imports if " anthropic" in n]
    assert any(name.startswith("kernel status imports ") for name in figures)
    assert not [p for p in Path("/proc").glob("[0-9]*/cmdline")  # its server was stopped
                if b"kernel-startup-" in _read(p)]


@pytest.mark.slow
def test_the_start_up_bench_stops_on_a_command_that_fails(tmp_path: Path) -> None:
    """A command that fails measures nothing: the bench says which, in one line."""
    data_dir = tmp_path / "data"
    data_dir.write_text("a file where the data dir should be")
    done = subprocess.run([*KERNEL, "bench", "startup", "--samples", "1", "--solves", "0"],
                          capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "KERNEL_DATA_DIR": str(data_dir),
                               "KERNEL_GRAPH": "embedded", "COLUMNS": "400"})
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: 'kernel status' exited with 2: error: cannot use")


@pytest.mark.slow
def test_a_scripted_solve_never_imports_the_model_sdk(tmp_path: Path) -> None:
    """A run that will never call a model does not pay for the model SDK's import (about
    1.7 s): ``-X importtime`` of the ingest example's scripted solve names no anthropic
    module, and it did resolve."""
    from kernel.bench.examples import EXAMPLES

    example = next(e for e in EXAMPLES if e.name == "ingest-pipeline")
    env = {**os.environ, "KERNEL_DATA_DIR": str(tmp_path), "KERNEL_GRAPH": "embedded"}
    try:
        done = subprocess.run([sys.executable, "-X", "importtime", "-c",
                               "from kernel.cli.app import main; main()", *example.command()],
                              capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
                              check=False)
    finally:
        from kernel.store.embedded_server import EmbeddedServer

        EmbeddedServer(tmp_path).stop()
    assert done.returncode == 0, done.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")]
    assert "kernel.solve.session" in imported  # the probe sees the solve's own imports
    assert not [m for m in imported if m.split(".")[0] == "anthropic"]
