"""The shipped planning examples by name, without importing the planner (``kernel plan
--help`` lists them)."""

from __future__ import annotations

from kernel.paths import seeds_dir


def example_names() -> list[str]:
    return sorted(p.name.removesuffix(".plan.yaml")
                  for p in (seeds_dir() / "examples").glob("*.plan.yaml"))
