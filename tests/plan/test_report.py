"""The HTML plan report, read in headless Chromium as a person would see it: the critical
path drawn in red, and every task title of a wide plan whole and inside the window."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kernel.plan.compose import compose
from kernel.plan.report import render_html
from kernel.plan.report_dag import NODE_W
from kernel.plan.session import example_goal, example_script, plan_goal
from kernel.protocol.plan_models import (
    Approach,
    ApproachSurvey,
    ExtractedConstraints,
    PlanConstraint,
    PlanTask,
    Range,
    TaskDag,
    TaskSurvey,
)
from kernel.store import GraphStore
from resolvers.scripted import ScriptedProposer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CRITICAL_RED = (192, 57, 43)  # the report's #c0392b
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium here: 'make test' installs Debian's chromium "
                             "package where it can")

# Appended to the page under test only: measures what the window shows.
MEASURE = """<script>
const tasks = [...document.querySelectorAll('g[data-task]')].map(g => {
  const title = g.querySelector('text.task-title').getBoundingClientRect();
  const box = g.querySelector('rect').getBoundingClientRect();
  return {id: g.dataset.task, left: title.left, right: title.right, boxRight: box.right,
          boxWidth: box.width,
          text: [...g.querySelectorAll('text.task-title tspan')].map(s => s.textContent)
                .join(' '),
          length: g.querySelector('text.length').textContent};
});
const pre = document.createElement('pre');
pre.id = 'measure';
pre.textContent = JSON.stringify({width: window.innerWidth,
                                  scrollWidth: document.documentElement.scrollWidth, tasks});
document.body.appendChild(pre);
</script>"""


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def wide_plan() -> dict[str, Any]:
    """Twelve tasks, ten of them side by side, with long titles; time in weeks; a cost wall
    repaired by a surveyed approach."""
    def task(i: int, deps: list[int], cost: float) -> PlanTask:
        return PlanTask(id=f"t{i}", type="build", confidence=0.8,
                        title=f"Workstream {i}: integrate the regional supplier catalogue "
                              f"and reconcile its pricing with the master ledger",
                        estimates={"cost_usd": Range(low=cost * 0.8, mid=cost, high=cost * 1.3),
                                   "weeks": Range(low=1, mid=2, high=3 + i % 3)},
                        depends_on=[f"t{d}" for d in deps])

    tasks = [task(0, [], 10), *(task(i, [0], 100 if i == 4 else 20) for i in range(1, 11)),
             task(11, list(range(1, 11)), 10)]
    constraints = [
        PlanConstraint(id="cost", title="spend under $250", kind="explicit", type="logic",
                       metric="cost_usd", aggregation="sum", op="<=", limit=250, unit="USD",
                       source_text="under $250"),
        PlanConstraint(id="time", title="live within 12 weeks", kind="explicit", type="logic",
                       metric="weeks", aggregation="critical_path", op="<=", limit=12,
                       unit="weeks", source_text="within 12 weeks")]

    def survey(triggers: dict[str, list[str]], _rollups: object) -> ApproachSurvey:
        return ApproachSurvey(surveys=[TaskSurvey(task_id=t, approaches=[Approach(
            id=f"{t}-reuse", title="reuse the existing catalogue connector", confidence=0.7,
            known_method=["connector reuse"],
            estimates={"cost_usd": Range(low=20, mid=30, high=40),
                       "weeks": Range(low=1, mid=2, high=3)}), Approach(
            id=f"{t}-new", title="write a connector for this supplier", confidence=0.6,
            judgment_required=["the supplier's format"],
            estimates={"cost_usd": Range(low=60, mid=80, high=110),
                       "weeks": Range(low=2, mid=3, high=4)})]) for t in sorted(triggers)])

    doc, _ = compose("Onboard ten regional suppliers for under $250 within 12 weeks",
                     "run:wide", ExtractedConstraints(constraints=constraints),
                     TaskDag(tasks=tasks, narrative="ten suppliers in parallel", claims=[]),
                     survey, [])
    return json.loads(json.dumps(doc.as_json()))


def test_the_wide_plan_is_the_case_the_report_must_handle() -> None:
    doc = wide_plan()
    assert len(doc["tasks"]) == 12
    assert doc["repair"]["feasible"] and doc["repair"]["chosen"] == {"t4": "t4-reuse"}
    page = render_html(doc)
    assert "2 weeks (1-4)" in page and "Revised critical path" in page
    assert "t4-reuse" in page and "wall on cost" in page


@needs_chromium
@pytest.mark.parametrize("width", [1280, 800])
def test_every_task_title_of_a_wide_plan_is_whole_and_inside_the_window(
        tmp_path: Path, width: int) -> None:
    doc = wide_plan()
    page = tmp_path / "plan.html"
    page.write_text(render_html(doc).replace("</body>", MEASURE + "</body>"))
    dom = _chromium(tmp_path, f"--window-size={width},900", "--virtual-time-budget=5000",
                    "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="measure">(.*?)</pre>', dom.stdout, re.S)
    assert found, "the measuring script did not run"
    seen = json.loads(html.unescape(found.group(1)))
    assert seen["width"] == width and seen["scrollWidth"] <= width  # no sideways scrolling
    by_id = {t["id"]: t for t in seen["tasks"]}
    assert sorted(by_id) == sorted(t["id"] for t in doc["tasks"])
    for t in doc["tasks"]:
        shown = by_id[t["id"]]
        assert shown["text"] == t["title"], "a title is cut"
        assert shown["left"] >= 0 and shown["right"] <= width, shown
        assert shown["right"] <= shown["boxRight"] + 1, ("a title spills out of its node", shown)
        assert shown["length"].startswith("2 weeks")
        # drawn at a readable size, not shrunk to fit: a node is NODE_W wide at scale 1
        assert shown["boxWidth"] >= 0.85 * NODE_W, shown


@pytest.mark.slow
@needs_chromium
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
    assert len(re.findall(r'class="node critical[ "]', dom.stdout)) == len(critical)
    assert dom.stdout.count('class="edge critical"') == len(critical) - 1
    for wall in doc["walls"]:
        for task_id in wall["cluster"]:
            assert re.search(rf'class="node[^"]* wall" data-task="{task_id}"', dom.stdout)
    shot = tmp_path / "plan.png"
    result = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,1600",
                       page.as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    width, height = image.size
    pixels = image.load()
    reds = sum(1 for x in range(0, width, 2) for y in range(0, height, 2)
               if all(abs(a - b) <= 12 for a, b in zip(pixels[x, y], CRITICAL_RED, strict=True)))
    assert reds > 125, "the critical path is not drawn in red"


def test_plan_report_takes_a_plan_file_and_refuses_anything_else(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from kernel.cli.app import app
    from kernel.errors import ConfigError

    plan, page = tmp_path / "plan.json", tmp_path / "plan.html"
    plan.write_text(json.dumps(wide_plan()))
    done = CliRunner().invoke(app, ["plan-report", str(plan), "--html", str(page)])
    assert done.exit_code == 0 and "Workstream 11" in page.read_text()
    for text in ("not json", "[1, 2]", '{"tasks": []}'):
        plan.write_text(text)
        refused = CliRunner().invoke(app, ["plan-report", str(plan), "--html", str(page)])
        assert isinstance(refused.exception, ConfigError), text  # main() exits 2


# Appended to the page under test only: what a reader would trip over.
OBSTACLES = """<script>
const rects = [...document.querySelectorAll('g[data-task]')].map(g => {
  const r = g.querySelector('rect').getBoundingClientRect();
  return {id: g.dataset.task, left: r.left, right: r.right, top: r.top, bottom: r.bottom};
});
const crossings = [];
for (const edge of document.querySelectorAll('#dag path.edge')) {
  const svg = edge.ownerSVGElement, m = edge.getScreenCTM();
  for (let s = 0; s <= edge.getTotalLength(); s += 2) {
    const p = edge.getPointAtLength(s).matrixTransform(m);
    for (const r of rects) {
      if (r.id === edge.dataset.from || r.id === edge.dataset.to) continue;
      if (p.x > r.left && p.x < r.right && p.y > r.top && p.y < r.bottom)
        crossings.push(edge.dataset.from + '->' + edge.dataset.to + ' under ' + r.id);
    }
  }
}
const line = document.querySelector('svg.waterfall line.limit').getBoundingClientRect();
const struck = [...document.querySelectorAll('svg.waterfall text.value')].filter(t => {
  const b = t.getBoundingClientRect();
  return b.top < line.top + 1 && b.bottom > line.top - 1;
}).map(t => t.textContent);
const pre = document.createElement('pre');
pre.id = 'obstacles';
pre.textContent = JSON.stringify({verdict: document.querySelector('.verdict').textContent,
                                  crossings: [...new Set(crossings)], struck,
                                  lengths: [...document.querySelectorAll('text.length')]
                                    .map(t => t.textContent)});
document.body.appendChild(pre);
</script>"""


def _migration_plan(tmp_path: Path, data_dir: Path) -> dict[str, Any]:
    """The docs' own script: two branches side by side, TIGHT after its repair (planned
    on the session's embedded server, in a graph of its own)."""
    import os
    import sys

    root = Path(__file__).resolve().parents[2]
    plan = tmp_path / "migration.json"
    done = subprocess.run(
        [sys.executable, "-c", "from kernel.cli.app import main; main()", "plan",
         "--proposer", "scripted", "--script",
         str(root / "docs" / "examples" / "db-migration.plan.yaml"), "--out", str(plan),
         "--progress", "none"], capture_output=True, text=True, check=False,
        env={**os.environ, "KERNEL_DATA_DIR": str(data_dir),
             "KERNEL_GRAPH_NAME": "report-migration"})
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(plan.read_text())
    return doc


@pytest.mark.slow
@needs_chromium
def test_a_tight_plan_on_two_branches_reads_true_in_the_browser(tmp_path: Path,
                                                                 data_dir: Path) -> None:
    from PIL import Image

    doc = _migration_plan(tmp_path, data_dir)
    assert [r["status"] for r in doc["repair"]["rollup"] if r["constraint_id"] == "time"] \
        == ["TIGHT"]
    page = tmp_path / "plan.html"
    page.write_text(render_html(doc).replace("</body>", OBSTACLES + "</body>"))
    dom = _chromium(tmp_path, "--window-size=1000,1800", "--virtual-time-budget=5000",
                    "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="obstacles">(.*?)</pre>', dom.stdout, re.S)
    assert found, "the measuring script did not run"
    seen = json.loads(html.unescape(found.group(1)))
    assert seen["verdict"].startswith("Feasible after repair, but time, downtime are TIGHT")
    assert "SAT, even" not in seen["verdict"]
    assert seen["crossings"] == []  # apptest -> rehearsal goes round replicate, not under it
    assert 'class="edge routed"' in dom.stdout
    assert seen["struck"] == []
    assert "1 week (0.8-1.3)" in seen["lengths"] and not any(
        length.startswith("1 weeks") for length in seen["lengths"])
    shot = tmp_path / "plan.png"
    result = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1000,1800",
                       page.as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    pixels = image.load()
    reds = sum(1 for x in range(0, image.size[0], 2) for y in range(0, image.size[1], 2)
               if all(abs(a - b) <= 12 for a, b in zip(pixels[x, y], CRITICAL_RED, strict=True)))
    assert reds > 125, "the critical path is not drawn in red"


def test_units_agree_with_their_numbers() -> None:
    from kernel.plan.report_dag import quantity

    assert [quantity(v, u) for v, u in [(1, "weeks"), (2, "week"), (0.5, "weeks"),
                                        (1, "hours"), (1, "USD"), (3, "")]] == \
        ["1 week", "2 weeks", "0.5 weeks", "1 hour", "1 USD", "3"]
