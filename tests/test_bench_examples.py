"""The benchmarks find their scripted examples wherever the seeds are: beside the source
in a checkout, bundled inside the package in an installed wheel."""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

import kernel.bench.examples as examples
import kernel.bench.flywheel as flywheel
import kernel.paths as paths


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The package as a wheel lays it out: seeds under ``kernel/_bundled``, none beside."""
    package = tmp_path / "site-packages" / "kernel"
    shutil.copytree(paths.seeds_dir(), package / "_bundled" / "seeds")
    monkeypatch.setattr(paths, "_PACKAGE", package)
    yield package
    monkeypatch.undo()
    importlib.reload(examples)
    importlib.reload(flywheel)


def test_an_installed_wheel_runs_its_bundled_examples(installed: Path) -> None:
    importlib.reload(examples)
    importlib.reload(flywheel)
    bundled = installed / "_bundled" / "seeds" / "examples"
    assert bundled == examples.EXAMPLES_DIR
    for example in examples.EXAMPLES:
        script = Path(example.command()[example.command().index("--script") + 1])
        assert script.is_file() and script.is_relative_to(bundled)
    assert bundled / "flywheel" == flywheel.EXAMPLE and flywheel.EXAMPLE.is_dir()
