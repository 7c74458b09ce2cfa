"""The HTML plan report renders in headless Chromium with the critical path drawn."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kernel.plan.report import render_html
from kernel.plan.session import example_goal, example_script, plan_goal
from kernel.store import GraphStore
from resolvers.scripted import ScriptedProposer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CRITICAL_RED = (192, 57, 43)  # the report's #c0392b
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium here: 'make test' installs Debian's "
                                             "chromium package where it can")
def test_the_report_renders_with_the_critical_path_drawn(initialised_graph: GraphStore,
                                                         tmp_path: Path) -> None:
    from PIL import Image

    script = example_script("swe-agent")
    goal, checks = example_goal(script)
    doc = plan_goal(initialised_graph, tmp_path, goal, ScriptedProposer.from_file(script),
                    {}, 5.0, 600, checks)
    page = tmp_path / "plan.html"
    page.write_text(render_html(doc))
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    critical = doc["critical_path"]["tasks"]
    assert dom.stdout.count('class="node critical"') == len(critical)
    assert dom.stdout.count('class="edge critical"') == len(critical) - 1
    shot = tmp_path / "plan.png"
    result = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1600,1400",
                       page.as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    width, height = image.size
    pixels = image.load()
    reds = sum(1 for x in range(0, width, 2) for y in range(0, height, 2)
               if all(abs(a - b) <= 12 for a, b in zip(pixels[x, y], CRITICAL_RED, strict=True)))
    assert reds > 125, "the critical path is not drawn in red"
