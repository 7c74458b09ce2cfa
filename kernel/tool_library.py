"""The kernel's tool library for people: every tool it built or a person supplied, what
each provides, who made it, how often attempts used it and how they ended, what it
replaced, and (for one tool) its code and the checks it passed when it was made.

Read by ``kernel tools``; the same rows are in ``kernel analytics build_reuse`` in part.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kernel.errors import ConfigError
from kernel.repositories import tools
from kernel.store.base import GraphStore


def library(store: GraphStore) -> list[dict[str, Any]]:
    """Every built or supplied tool, by id."""
    return [_shown(row) for row in tools.library(store)]


def tool_detail(store: GraphStore, data_dir: Path, tool_id: str) -> dict[str, Any]:
    """One tool with its code (the artifact's text) and the checks its code passed."""
    from kernel.artifact_files import artifact_bytes, artifact_record

    rows = tools.library(store, tool_id)
    if not rows:
        raise ConfigError(f"{tool_id} is not a built or supplied tool; 'kernel tools' lists "
                          "them")
    shown = _shown(rows[0])
    shown["code"] = None
    if rows[0]["code_id"]:
        record = artifact_record(store, rows[0]["code_id"])
        shown["code"] = artifact_bytes(data_dir, record).decode(errors="replace")
    shown["checks"] = [_check_record(c) for c in rows[0]["checks"] if c.get("attempt")]
    return shown


def _shown(row: tools.LibraryTool) -> dict[str, Any]:
    metadata = json.loads(row["metadata"] or "{}")
    uses, passed, failed = int(row["uses"]), int(row["passed"]), int(row["failed"])
    judged = passed + failed
    return {"id": row["id"], "label": row["label"],
            "origin": "built" if row["origin"] == "system" else "supplied by a person",
            "kind": metadata.get("kind"), "provides": sorted(row["provides"]),
            "made_by": sorted(row["builders"]), "answers": sorted(row["requests"]),
            "built_for": row["built_for"],
            "parts": [p["id"] for p in sorted((p for p in row["parts"] if p.get("id")),
                                               key=lambda p: p["order"])],
            "replaces": sorted(row["replaces"]), "replaced_by": sorted(row["replaced_by"]),
            "uses": uses, "passed": passed, "failed": failed,
            "pass_rate": round(passed / judged, 4) if judged else None,
            "code_artifact": row["code_id"]}


def _check_record(made: dict[str, Any]) -> dict[str, Any]:
    """What the attempt that wrote the code was checked against, and the outcome."""
    verification = json.loads(made.get("verification") or "{}")
    return {"attempt": made["attempt"], "verdict": made.get("verdict"),
            "checks": [{"constraint_id": c.get("constraint_id"), "passed": c.get("passed"),
                        "sigma": c.get("sigma_i")} for c in verification.get("checks", [])]}
