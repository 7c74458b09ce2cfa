"""check-plan's strict reading: a document is accepted only in the form the planner writes.

JSON lets a file say what the planner never would: a key twice in one object (a parser
keeps the last, so what is checked is not what a reader sees), ``NaN``, ``Infinity`` or
``1e309`` as numbers, keys the planner does not write (``"feasible": false``, a
``verdict``), values outside their domain (a confidence of 1.5). Each is a failed
assertion with its id here, never an exception:

* 0.4: the document has exactly the planner's sections and fields, each of its kind and
  in its domain (``kernel.plan.document.shape_problems``);
* 0.5: no object repeats a key, and every number is finite.
"""

from __future__ import annotations

import json
import math
from typing import Any

from kernel.plan.document import shape_problems
from kernel.plan.verdict import Result


class StrictText:
    """What reading a file found beside the document: repeated keys, numbers that are
    not finite (each as ``where: what``)."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def load(self, text: str) -> Any:
        return json.loads(text, object_pairs_hook=self._object, parse_constant=self._constant,
                          parse_float=self._float)

    def _object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                self.problems.append(f"key {key!r} appears twice in one object (a parser "
                                     "keeps the last)")
            seen.add(key)
        return dict(pairs)

    def _constant(self, name: str) -> float:
        self.problems.append(f"{name} is not a number a plan holds")
        return 0.0  # read on as a number, so the rest of the document can be judged

    def _float(self, text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            self.problems.append(f"{text} is too large to be a number (it reads as infinity)")
            return 0.0
        return value


def non_finite(value: Any, where: str = "document") -> list[str]:
    """Where a document built in memory holds NaN or an infinity."""
    if isinstance(value, float) and not math.isfinite(value):
        return [f"{where}: {value} is not a finite number"]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in non_finite(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in non_finite(v, f"{where}[{i}]")]
    return []


def strict(doc: dict[str, Any], read: list[str]) -> list[Result]:
    """Assertions 0.4 and 0.5 (``read``: what reading the file found)."""
    shape = shape_problems(doc)
    numbers = [*read, *non_finite(doc)]
    return [
        Result("0.4", "only the planner's sections and fields, each in its domain", not shape,
               "; ".join(shape[:5]) + (f" (and {len(shape) - 5} more)" if len(shape) > 5
                                       else "") if shape else "as the planner writes it"),
        Result("0.5", "no key repeated in an object; every number finite", not numbers,
               "; ".join(numbers[:5]) or "none"),
    ]
