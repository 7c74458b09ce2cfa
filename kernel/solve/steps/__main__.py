"""Rewrite the step table in docs/solve-loop.md from the code: ``python -m kernel.solve.steps``."""

from __future__ import annotations

import sys
from pathlib import Path

from kernel.solve.steps import table

BEGIN, END = "<!-- step table: begin -->\n", "<!-- step table: end -->\n"
DOC = Path(__file__).resolve().parents[3] / "docs" / "solve-loop.md"


def rendered(text: str) -> str:
    """``text`` with the block between the markers replaced by the current table."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}{table()}{END}{tail}"


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DOC
    path.write_text(rendered(path.read_text(encoding="utf-8")), encoding="utf-8")
