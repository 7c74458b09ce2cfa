"""Failure modes as diagnosed causes.

A failed attempt's cause is what the retry step's feedback diagnosed, not the titles of
the constraints it violated (those are the attempt's VIOLATED edges). The cause's name
is normalized to a snake_case slug and kept whole; a diagnosis whose embedded name and
description are near one already known (the same cause in other words) joins that
failure mode instead of splitting the analytics, and its own wording stays on the
FAILED_BECAUSE edge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from embeddings.encoder import Encoder
from kernel.core.run import Run
from kernel.repositories import knowledge

MERGE_THRESHOLD = 0.90  # on the (1 + cos) / 2 scale: cos >= 0.8
CANDIDATES = 5
UNNAMED = "undiagnosed"


def normalize(name: str) -> str:
    """A cause's name as a slug: lowercase words joined by underscores, never cut."""
    return "_".join(re.findall(r"[a-z0-9]+", name.lower())) or UNNAMED


def text_of(name: str, description: str) -> str:
    """What is embedded: the name's words and the description."""
    return f"{name.replace('_', ' ')}: {description}".strip()


@dataclass(frozen=True)
class Diagnosed:
    id: str
    name: str
    merged_into: str | None  # the known failure mode a near-duplicate joined


@dataclass(frozen=True)
class Diagnosis:
    """A cause as it will be recorded: the failure mode it joins (``id``), its slug,
    the wording it was given and its embedding."""

    id: str
    name: str
    description: str
    vector: list[float]
    diagnosed: bool

    def recorded(self) -> Diagnosed:
        own = f"failure:{self.name}"
        return Diagnosed(self.id, self.name, None if self.id == own else self.id)


class FailureModes:
    def __init__(self, run: Run, encoder: Encoder, threshold: float = MERGE_THRESHOLD) -> None:
        self.run = run
        self.encoder = encoder
        self.threshold = threshold

    def record(self, attempt_id: str, name: str, description: str,
               diagnosed: bool = True) -> Diagnosed:
        """Link the attempt FAILED_BECAUSE the diagnosed cause (see ``diagnose`` and
        ``store``)."""
        cause = self.diagnose(name, description, diagnosed)
        self.store(attempt_id, cause)
        return cause.recorded()

    def diagnose(self, name: str, description: str, diagnosed: bool = True) -> Diagnosis:
        """The cause ``name`` names, as it would be recorded (reads only): a diagnosed
        cause near one already known joins it.

        ``diagnosed=False``: a diagnosis that cites no evidence; ``name`` is then the
        violated constraint's, kept as its own undiagnosed failure (never merged into a
        diagnosed cause, whose analytics it would distort)."""
        slug = normalize(name) if diagnosed else f"{UNNAMED}_{normalize(name)}"
        vector = self.encoder.encode_one(text_of(slug, description))
        own = f"failure:{slug}"
        target = own if not diagnosed or knowledge.failure_known(self.run.store, own) else \
            self._nearest(vector, own)
        return Diagnosis(target, slug, description, vector, diagnosed)

    def store(self, attempt_id: str, cause: Diagnosis) -> None:
        """Link the attempt FAILED_BECAUSE ``cause`` (one guarded commit that leaves the
        step's proposals unconsumed, so a crash before the step's end serves the same
        diagnosis again and this merge finds the same node)."""
        knowledge.record_diagnosis(self.run, {
            "attempt_id": attempt_id, "failure_id": cause.id, "name": cause.name,
            "description": cause.description, "vector": cause.vector,
            "source": "diagnosis" if cause.diagnosed else "undiagnosed",
        }, what=f"record the diagnosed cause of {attempt_id}")

    def _nearest(self, vector: list[float], own: str) -> str:
        """The known cause a new name joins (the nearest within the threshold), or its own."""
        near = [i for i in knowledge.nearest_failures(self.run.store, vector, CANDIDATES,
                                                      self.threshold) if i != own]
        return near[0] if near else own
