"""The tool library beyond ``kernel.core.registry.Registry``: a built or hired tool
registered with its lineage in one commit, and the library read back with its record."""

from __future__ import annotations

from typing import Any, TypedDict, cast

from kernel.core.run import Run
from kernel.store.base import GraphStore


def register(run: Run, params: dict[str, Any], *, what: str) -> None:
    """The tool, its capabilities, who built it, its parts, what it replaces, and the goal
    it was made for moved on, in one commit (``cypher/grow/register_tool``)."""
    run.commit("grow/register_tool", params, what=what)


class LibraryTool(TypedDict):
    """A built or supplied tool as the library shows it (``cypher/tools/library``)."""

    id: str
    label: str | None
    origin: str  # system (built) or human (supplied)
    built_for: str | None  # the goal it was made for
    metadata: str | None  # JSON: kind (script, composite), artifact_id
    provides: list[str]
    builders: list[str]
    requests: list[str]
    parts: list[dict[str, Any]]  # {order, id}, for a composite
    replaced_by: list[str]
    replaces: list[str]
    code_id: str | None
    checks: list[dict[str, Any]]  # {attempt, verdict, verification} of what made the code
    uses: int
    passed: int
    failed: int


def library(store: GraphStore, tool_id: str | None = None) -> list[LibraryTool]:
    """Every tool the system built or a person supplied (or the one ``tool_id`` names)."""
    return cast(list[LibraryTool], store.run("tools/library", {"id": tool_id}))
