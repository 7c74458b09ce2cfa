"""The digest that binds a plan document to what it was computed from.

Everything else in a plan is recomputable from these inputs (the goal, the model's
proposals and the verification list), so check-plan recomputes it; the inputs themselves
are not, so the document carries their SHA-256 over canonical JSON. An edited, truncated
or partly deleted input (an implicit constraint removed, a survey dropped, a verification
deleted) no longer matches.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

SCHEMA = "kernel-plan/2"


def inputs_of(doc: dict[str, Any]) -> dict[str, Any]:
    """The parts of a plan document that came from outside the kernel's arithmetic."""
    survey = doc.get("survey") or {}
    return {
        "goal": doc.get("goal"), "constraints": doc.get("constraints"),
        "open_questions": doc.get("open_questions"), "tasks": doc.get("tasks"),
        "narrative": doc.get("narrative"),
        "claims": [{k: c.get(k) for k in ("constraint_id", "estimate", "value")}
                   for c in doc.get("claims") or [] if isinstance(c, dict)],
        "surveys": survey.get("surveys") if isinstance(survey, dict) else None,
        "verifications": doc.get("verifications"),
    }


def inputs_digest(doc: dict[str, Any]) -> str:
    canonical = json.dumps(inputs_of(doc), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
