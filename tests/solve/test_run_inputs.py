"""A run's inputs are one model: recorded at start, read back typed by resume and replay,
and written as the same bytes the record always had."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest

from kernel.core.envelopes import ConstraintSpec, Provenance
from kernel.core.run import Run
from kernel.errors import ConfigError
from kernel.runtime import inputs as inputs_module
from kernel.runtime.inputs import RunInputs
from kernel.runtime.kernel import SolveConfig
from kernel.runtime.start import start
from kernel.store.base import GraphStore
from resolvers.sandbox.runner import default_workspace_root

CORE = ConstraintSpec(type="logic", domain="cost", title="cost at most $1",
                      payload={"check": "arith", "expr": "cost_usd <= 1"},
                      provenance=Provenance(source="human"))


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(inputs_module).failed == 0


def test_only_what_was_given_is_recorded_beside_what_always_is() -> None:
    bare = RunInputs(goal="g", budget_usd=1.0, time_seconds=60.0)
    assert set(bare.record()) == {"goal", "budget_usd", "time_seconds", "max_attempts", "core",
                                  "solve"}
    given = RunInputs(goal="g", budget_usd=1.0, time_seconds=60.0, intake=True, mode="plan")
    assert given.record()["intake"] is True and given.record()["mode"] == "plan"
    assert "stop_after_intake" not in given.record()


def test_the_record_is_the_one_earlier_kernels_wrote() -> None:
    """The dict ``start`` built by hand before the model existed, for the same inputs."""
    config = SolveConfig(max_wall_seconds=120.0)
    before = {"goal": "g", "budget_usd": 2.0, "time_seconds": 90.0, "max_attempts": 3,
              "core": [CORE.model_dump(mode="json")],
              "solve": {f: getattr(config, f) for f in config.__dataclass_fields__},
              "proposer": "scripted", "script": "/x.script.yaml", "intake": True}
    now = RunInputs(goal="g", budget_usd=2.0, time_seconds=90.0, max_attempts=3, core=[CORE],
                    solve=config, proposer="scripted", script="/x.script.yaml", intake=True)
    assert json.dumps(now.record(), sort_keys=True) == json.dumps(before, sort_keys=True)


def test_a_started_run_reads_its_inputs_back(initialised: GraphStore, tmp_path: Path) -> None:
    given = RunInputs(goal="Count the words", budget_usd=1.5, time_seconds=300.0,
                      max_attempts=2, core=[CORE], solve=SolveConfig(max_wall_seconds=99.0),
                      proposer="scripted", script=str(tmp_path / "s.yaml"))
    kernel, root = start(initialised, given, None, tmp_path, default_workspace_root())
    read = RunInputs.of_run(Run.load(initialised, kernel.run.run_id))
    assert read == given
    assert read.solve.max_wall_seconds == 99.0 and read.core == [CORE]
    assert kernel.tree.get(root).max_attempts == 2


def test_inputs_this_kernel_cannot_read_are_named(initialised: GraphStore) -> None:
    run = Run.start(initialised, "odd", {"goal": "g", "budget_usd": 1.0, "time_seconds": 5.0,
                                         "colour": "red"})
    with pytest.raises(ConfigError, match="'colour' cannot be read"):
        RunInputs.of_run(run)
    bare = Run.start(initialised, "no inputs")
    with pytest.raises(ConfigError, match="records no inputs"):
        RunInputs.of_run(bare)
