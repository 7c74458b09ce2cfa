"""An output as a prompt shows it: its text, files and tests, each cut at
``EXCERPT_CHARS`` with a pointer to the whole (code stays code).

A module of its own because verification shows the judge this same view while
prompt_inputs reads verification's checks: both import this, neither the other.
"""

from __future__ import annotations

from typing import Any

from kernel.protocol.solve_models import ResolutionOutput

EXCERPT_CHARS = 4000


def capped(text: str, pointer: str, limit: int = EXCERPT_CHARS) -> str:
    """``text``, or its first ``limit`` characters and where the rest is."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters: {pointer}]"


def output_view(output: ResolutionOutput, artifact_id: str | None = None) -> dict[str, Any]:
    """An output as a prompt shows it: its text, files and tests, each capped."""
    pointer = f"kernel artifact show {artifact_id}" if artifact_id else "not stored"
    view: dict[str, Any] = {"artifact_type": output.artifact_type, "format": output.format,
                            "content": capped(output.content, pointer)}
    for field in ("files", "tests"):
        files = getattr(output, field)
        if files:
            view[field] = {path: capped(text, pointer) for path, text in sorted(files.items())}
    if output.metrics:
        view["metrics"] = dict(sorted(output.metrics.items()))
    if output.notes:
        view["notes"] = output.notes
    return view
