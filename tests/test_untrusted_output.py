"""What a model writes and what a graph import carries reaches the person's terminal only
as visible text, and files from a model never land where a tool would run them on its
own. Through ``kernel`` itself, on both stores."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kernel.cli.shown import shown
from kernel.store import GraphStore
from kernel.store.embedded_server import EmbeddedServer
from tests.conftest import store_env
from tests.sandbox_support import needs_sandbox
from tests.test_hostile_inputs import kernel, value_script

# retitle the window, clear the screen and scrollback, reorder and hide text, a fake line
HOSTILE = "\x1b]2;owned\x07\x1b[2J\x1b[3J\u202egnp.py\u200b\u2028\rresolved\x9b31m"
RAW = ("\x1b", "\x07", "\u202e", "\u200b", "\u2028", "\r", "\x9b")


@pytest.fixture(autouse=True)
def _own_server_stopped(tmp_path: Path) -> Iterator[None]:
    """The commands start an embedded server under the test's folder: stop it after."""
    yield
    EmbeddedServer(tmp_path).stop()


def _raw_in(text: str) -> list[str]:
    return [repr(c) for c in RAW if c in text]


def test_shown_makes_every_hidden_character_visible() -> None:
    assert shown(HOSTILE) == ("\\u001b]2;owned\\u0007\\u001b[2J\\u001b[3J\\u202egnp.py"
                              "\\u200b\\u2028\\u000dresolved\\u009b31m")
    assert shown("a\nb\tc", multiline=True) == "a\nb\tc"
    assert shown("a\nb") == "a\\u000ab"
    assert shown("[link=http://x]y[/link]", markup=True) == "\\[link=http://x]y\\[/link]"
    assert shown("\U000e0001tag") == "\\U000e0001tag"


def _hostile_script(tmp_path: Path) -> Path:
    """A value() whose test fails, with the model's strings carrying terminal escapes in
    the constraint's title, the test's output, a file's name and the feedback."""
    script: dict[str, Any] = value_script({})
    constraint = script["proposals"][0]["output"]["constraints"][0]
    constraint["title"] = f"value is two {HOSTILE}"
    script["proposals"][1]["output"]["constraint_ids"] = [constraint["title"]]
    script["proposals"][2]["output"]["tests"] = {"test_main.py": (
        "from main import value\n\n\ndef test_value():\n"
        f"    assert value() == 3, {HOSTILE!r}\n")}
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump(script))
    return path


@pytest.mark.slow
@needs_sandbox
def test_model_text_reaches_every_command_visible(initialised: GraphStore, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    env = store_env(initialised, tmp_path)
    code = kernel(monkeypatch, env, "solve", f"Write value returning two {HOSTILE}",
                  "--proposer", "scripted", "--script", str(_hostile_script(tmp_path)),
                  "--budget", "1", "--time", "120", "--max-attempts", "1",
                  "--progress", "plain")
    said = capfd.readouterr()
    assert code == 1, said
    assert _raw_in(said.out + said.err) == [], said.err[-2000:]
    assert "\\u001b]2;owned" in said.err  # the goal in the progress lines, made visible
    runs = kernel(monkeypatch, env, "runs", "--json")
    run_id = json.loads(capfd.readouterr().out)[0]["id"]
    assert runs == 0
    kernel(monkeypatch, env, "tree", run_id, "--json")
    goal_id = json.loads(capfd.readouterr().out)[0]["id"]
    for args in (("log", run_id), ("tree", run_id), ("status", run_id), ("runs",),
                 ("show", goal_id)):
        code = kernel(monkeypatch, env, *args)
        said = capfd.readouterr()
        assert code == 0, (args, said)
        assert _raw_in(said.out + said.err) == [], (args, said.out[-3000:])
        assert args == ("runs",) or "\\u001b" in said.out, (args, said.out[-3000:])


def test_progress_json_lines_hold_no_raw_character(initialised: GraphStore, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    script = _stop_script(tmp_path)
    env = store_env(initialised, tmp_path)
    for mode in ("json", "plain"):
        code = kernel(monkeypatch, env, "solve", f"Write value {HOSTILE}", "--proposer",
                      "scripted", "--script", str(script), "--budget", "1", "--time", "60",
                      "--progress", mode)
        said = capfd.readouterr()
        assert code == 1, said
        assert _raw_in(said.out + said.err) == [], (mode, said.err[-2000:])
        assert "\\u001b]2;owned" in said.err, said.err


def test_imported_ids_reach_status_and_runs_visible(initialised: GraphStore, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    """A run exported, its id and goal rewritten to carry escapes, imported back:
    ``kernel runs`` and ``kernel status RUN`` show them visibly."""
    env = store_env(initialised, tmp_path)
    assert kernel(monkeypatch, env, "solve", "Write value", "--proposer", "scripted",
                  "--script", str(_stop_script(tmp_path)), "--budget", "1", "--time", "60",
                  "--progress", "none") == 1
    capfd.readouterr()
    kernel(monkeypatch, env, "runs", "--json")
    run_id = json.loads(capfd.readouterr().out)[0]["id"]
    export = tmp_path / "run.jsonl"
    assert kernel(monkeypatch, env, "graph", "export", str(export), "--no-contents") == 0
    hostile_id = run_id.replace("run:", "run:h") + HOSTILE
    lines = [_renamed(json.loads(line), run_id, hostile_id)
             for line in export.read_text().splitlines()]
    lines = [_renamed(line, "Write value", f"Write value {HOSTILE}") for line in lines]
    export.write_text("".join(json.dumps(line) + "\n" for line in lines))
    capfd.readouterr()
    code = kernel(monkeypatch, env, "graph", "import", str(export))
    assert code == 0, capfd.readouterr()
    capfd.readouterr()
    for args in (("runs",), ("status", "run:h")):
        code = kernel(monkeypatch, env, *args)
        said = capfd.readouterr()
        assert code == 0, (args, said)
        assert _raw_in(said.out + said.err) == [], (args, said.out[-3000:])
        assert "\\u001b" in said.out, (args, said.out[-3000:])


def _renamed(value: Any, old: str, new: str) -> Any:
    """``value`` with ``old`` replaced by ``new`` in every string, JSON held in strings too."""
    if isinstance(value, dict):
        return {k: _renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, old, new) for v in value]
    if isinstance(value, str) and value[:1] in "{[" and value:
        return json.dumps(_renamed(json.loads(value), old, new))
    return value.replace(old, new) if isinstance(value, str) else value


def _stop_script(tmp_path: Path) -> Path:
    """A run that stops at its first resolve: no constraints, no sandbox."""
    script = tmp_path / "stop.yaml"
    script.write_text(yaml.safe_dump({"version": 1, "proposals": [
        {"operation": "identify_constraints", "goal": "*", "output": {"constraints": []}},
        {"operation": "select_constraints", "goal": "*",
         "output": {"rationale": "all", "constraint_ids": []}}]}))
    return script


@pytest.mark.parametrize(("names", "wanted"), [
    (["a\u202eyp.py"], "'\\u202e'"), (["c\u200b.py"], "'\\u200b'"),
    (["d\u2028e.py"], "'\\u2028'"), (["f\u2029.py"], "'\\u2029'"), (["\ufeffg.py"], "'\\ufeff'"),
    (["caf\u00e9.py", "cafe\u0301.py"], "one name"), (["Main.py", "main.py"], "one name"),
    (["pkg/A.py", "PKG/a.py"], "one name"), (["Pkg", "pkg/a.py"], "also the folder")])
def test_a_file_name_that_hides_text_or_collides_is_refused(names: list[str],
                                                             wanted: str) -> None:
    from kernel.protocol.file_names import problems

    found = problems(names)
    assert len(found) == 1 and wanted in found[0], found


@pytest.mark.slow
@needs_sandbox
def test_names_that_hide_text_or_collide_fail_the_attempt(initialised: GraphStore,
                                                          tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capfd: pytest.CaptureFixture[str]
                                                          ) -> None:
    env = store_env(initialised, tmp_path)
    for files in ({"a\u202eyp.py": "x = 1\n"}, {"Main.py": "x = 1\n"},
                  {"caf\u00e9.py": "x = 1\n", "cafe\u0301.py": "x = 2\n"}):
        script = tmp_path / "names.yaml"
        script.write_text(yaml.safe_dump(value_script(files)))
        code = kernel(monkeypatch, env, "solve", "Write value returning two", "--proposer",
                      "scripted", "--script", str(script), "--budget", "1", "--time", "120",
                      "--max-attempts", "1", "--progress", "none")
        said = capfd.readouterr()
        assert code == 1, (files, said)
        assert kernel(monkeypatch, env, "log", "latest") == 0
        story = capfd.readouterr().out
        assert "may not" in story or "one name" in story, story[-2000:]


# Each would run on the person's machine once saved: pytest runs conftest.py (here it
# clears every test and leaves a marker), git runs core.fsmonitor, Python a .pth line.
AUTORUN = {
    "conftest.py": "import pathlib\n\n\ndef pytest_collection_modifyitems(items):\n"
                   "    pathlib.Path('RAN').write_text('conftest ran')\n    items.clear()\n",
    "evil.pth": "import os; os.system('touch PTH_RAN')\n",
    ".git/config": "[core]\n\tfsmonitor = touch GIT_RAN\n",
    ".vscode/tasks.json": '{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}\n',
    ".envrc": "touch ENVRC_RAN\n", "sitecustomize.py": "open('SITE_RAN', 'w')\n",
    ".pre-commit-config.yaml": "repos: []\n", ".GIT/hooks/pre-commit": "touch HOOK\n"}


@needs_sandbox
def test_files_a_tool_would_run_are_not_written(initialised: GraphStore, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capfd: pytest.CaptureFixture[str]) -> None:
    """The sandbox never runs the output's conftest.py (the run resolves: its test ran);
    --out and kernel artifact save leave every such file out and name it; only
    --allow-autorun writes them."""
    env = store_env(initialised, tmp_path)
    script = tmp_path / "autorun.yaml"
    script.write_text(yaml.safe_dump(value_script(AUTORUN)))
    out = tmp_path / "out"
    code = kernel(monkeypatch, env, "solve", "Write value returning two", "--proposer",
                  "scripted", "--script", str(script), "--budget", "1", "--time", "120",
                  "--max-attempts", "1", "--progress", "none", "--out", str(out))
    said = capfd.readouterr()
    assert code == 0, said
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == ["main.py", "test_main.py"], written
    for name in AUTORUN:
        assert name in said.err, (name, said.err)
    assert "--allow-autorun" in said.err
    saved = tmp_path / "saved"
    assert kernel(monkeypatch, env, "artifact", "save", "latest", str(saved)) == 0
    said = capfd.readouterr()
    assert sorted(p.name for p in saved.iterdir()) == ["main.py", "test_main.py"]
    assert "conftest.py (pytest runs it)" in said.err, said.err
    everything = tmp_path / "everything"
    assert kernel(monkeypatch, env, "artifact", "save", "latest", str(everything),
                  "--allow-autorun") == 0
    assert (everything / "conftest.py").read_text() == AUTORUN["conftest.py"]
    assert (everything / ".git/config").exists()
