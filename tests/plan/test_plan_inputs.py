"""A newcomer's own planning script: the one the docs show plans and checks clean, and
each mistake it invites is bad input (exit 2, one line naming the field and the fix)
before anything is paid for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kernel.plan import feasibility as f
from kernel.protocol.plan_models import Approach, PlanConstraint, Range, TaskSurvey
from tests.plan.test_walls import MIGRATION, TIME

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "examples" / "db-migration.plan.yaml"
KERNEL = [sys.executable, "-c", "from kernel.cli.app import main; main()"]


def _kernel(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kernel ARGS`` on the session's embedded server, in a graph of its own."""
    return subprocess.run([*KERNEL, *args], capture_output=True, text=True, check=False,
                          env={**os.environ, "KERNEL_DATA_DIR": str(data_dir),
                               "KERNEL_GRAPH_NAME": f"plan-inputs-{uuid.uuid4().hex[:8]}"})


@pytest.mark.slow
def test_the_docs_script_plans_a_wall_on_each_branch_and_checks_clean(
        tmp_path: Path, data_dir: Path) -> None:
    plan = tmp_path / "plan.json"
    done = _kernel(data_dir, "plan", "--proposer", "scripted", "--script", str(SCRIPT),
                   "--out", str(plan), "--progress", "none")
    assert done.returncode == 0, done.stderr
    doc = json.loads(plan.read_text())
    (wall,) = doc["walls"]
    assert set(wall["cluster"]) == {"replicate", "app_changes"}  # one per branch
    assert doc["repair"]["chosen"] == {"app_changes": "shim", "replicate": "logical"}
    checked = _kernel(data_dir, "check-plan", str(plan))
    assert checked.returncode == 0, checked.stdout[-2000:]
    assert "7.3" in checked.stdout  # the 'on': check ran


def _mutated(tmp_path: Path, old: str, new: str) -> Path:
    text = SCRIPT.read_text()
    assert old in text, old
    path = tmp_path / "mine.plan.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(("old", "new", "said"), [
    ("'on': [replicate, apptest]", "on: [replicate, apptest]", "quote it ('on'"),
    ("title: 'under $25,000'", "title: under $25,000", "a comma ends a value"),
    ("weeks: {low: 3.2, mid: 4, high: 5.2}", "weeks: {low: 3.2, mid: .inf, high: .inf}",
     "finite number"),
    ("limit: 6.5, unit: weeks", "limit: .nan, unit: weeks", "finite number"),
    ("source_text: within 6.5 weeks}", "source_text: ''}", "source_text must give the words"),
    ("{check: constraint_present, match: downtime,",
     "{check: approach_split, match: logical, constraint: time,",
     "approach_split compares each approach's total of a summed constraint"),
])
def test_a_mistake_in_a_plan_script_is_bad_input(tmp_path: Path, data_dir: Path, old: str,
                                                  new: str, said: str) -> None:
    done = _kernel(data_dir, "plan", "--proposer", "scripted", "--script",
                   str(_mutated(tmp_path, old, new)), "--progress", "none")
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], done.stderr
    assert done.stdout == ""  # nothing planned, nothing paid for


@pytest.mark.slow
def test_plan_takes_progress_like_solve(data_dir: Path) -> None:
    done = _kernel(data_dir, "plan", "--proposer", "scripted", "--script", str(SCRIPT),
                   "--progress", "json", "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stderr.splitlines()]
    assert {e["what"] for e in events if e["kind"] == "call"} >= {
        "plan_constraints", "plan_tasks", "survey_approaches"}
    assert json.loads(done.stdout)["schema"] == "kernel-plan/2"
    bad = _kernel(data_dir, "plan", "--example", "sensor-kits", "--progress", "loud")
    assert bad.returncode == 2 and "--progress must be one of" in bad.stderr


def test_a_build_that_would_take_zero_weeks_is_never_the_repair() -> None:
    """The cheapest survey answer builds the replica in 0 weeks for $0: no repair takes
    it, whatever the unit of time."""
    time = PlanConstraint(**{**TIME.model_dump(), "limit": 9.0})  # the replica branch alone
    free = Approach(id="magic", title="it is already there", confidence=0.9,
                    estimates={"weeks": Range(low=0, mid=0, high=0),
                               "cost_usd": Range(low=0, mid=0, high=0)})
    honest = Approach(id="logical", title="logical replication", confidence=0.6,
                      estimates={"weeks": Range(low=0.8, mid=1, high=1.4),
                                 "cost_usd": Range(low=4500, mid=5000, high=6000)})
    fixed = f.repair([time], MIGRATION,
                     [TaskSurvey(task_id="replicate", approaches=[free, honest])])
    assert fixed.feasible and fixed.chosen == {"replicate": "logical"}
    assert f.zero_time_builds(f.apply(MIGRATION, {"replicate": free})) == ["replicate"]
    assert f.is_time_metric("weeks") and f.is_time_metric("time_hours") \
        and f.is_time_metric("duration_months") and not f.is_time_metric("cost_usd")
