"""Budget units: integers, so ledger sums are exact on both backends.

Cost is kept in micro-dollars and time in milliseconds; the CLI and resolvers speak
dollars and seconds and convert at the edge.
"""

from __future__ import annotations

MICROS_PER_USD = 1_000_000
MS_PER_SECOND = 1_000
# The most dollars or seconds a person may give: far past any real run, and 1e15 micros
# or 1e12 ms still fit a float exactly and an int64 with room to add.
MAX_AMOUNT = 1e9


def usd_to_micros(usd: float) -> int:
    return round(usd * MICROS_PER_USD)


def micros_to_usd(micros: int) -> float:
    return micros / MICROS_PER_USD


def seconds_to_ms(seconds: float) -> int:
    return round(seconds * MS_PER_SECOND)


def ms_to_seconds(ms: int) -> float:
    return ms / MS_PER_SECOND


def canonical_float(value: float) -> float:
    """15 significant digits: what both backends return identically."""
    return float(f"{value:.15g}")
