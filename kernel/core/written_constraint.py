"""A constraint as a person writes it, ``TYPE[:DOMAIN]:TEXT``, read as text only.

A logic constraint's TEXT is normally its own comparison (``rows == 3``), which is then
also its title. ``TITLE: COMPARISON`` gives it a title of its own, the name a script's
judgments, diagnoses and selections use (``prints exactly the rows asked for: rows ==
3``). A comparison never holds a colon, so the last one splits the two.
"""

from __future__ import annotations

COMPARISONS = ("<", ">", "==", "!=")


def titled_comparison(text: str) -> tuple[str, str] | None:
    """``(title, comparison)`` when ``text`` is ``TITLE: COMPARISON``; otherwise None."""
    title, colon, comparison = text.rpartition(":")
    title, comparison = title.strip(), comparison.strip()
    if not colon or not title or not any(op in comparison for op in COMPARISONS):
        return None
    return title, comparison


def written_title(text: str) -> str:
    """The title of a constraint written ``TYPE[:DOMAIN]:TEXT``."""
    parts = [part.strip() for part in text.split(":", 2)]
    named = titled_comparison(parts[2]) if len(parts) == 3 and parts[0] == "logic" else None
    return named[0] if named else parts[-1]
