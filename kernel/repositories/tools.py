"""The tool library's writes beyond ``kernel.core.registry.Registry``: a built or hired
tool registered with its lineage in one commit."""

from __future__ import annotations

from typing import Any

from kernel.core.run import Run


def register(run: Run, params: dict[str, Any], *, what: str) -> None:
    """The tool, its capabilities, who built it, its parts, what it replaces, and the goal
    it was made for moved on, in one commit (``cypher/grow/register_tool``)."""
    run.commit("grow/register_tool", params, what=what)
