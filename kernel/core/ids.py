"""Identifiers: ULIDs derived from the run, so a replay recreates the same ids.

A run's own id and start time are the only random/wall-clock inputs; they are
recorded on the Run node. Every other id is a ULID whose timestamp is the run's
start plus its commit sequence and whose random part is a hash of (run, seq, kind),
so ids sort by creation and are identical when the same commits are replayed.
Knowledge-graph ids are namespaced by kind (``node:``, ``attempt:`` ...).
"""

from __future__ import annotations

import hashlib

from ulid import ULID

PREFIXES = {
    "run": "run:", "goal": "node:", "attempt": "attempt:", "artifact": "artifact:",
    "constraint": "constraint:", "budget": "budget:", "log": "log:", "capreq": "capreq:",
    "ledger": "ledger:",
}


def new_run_ulid() -> ULID:
    """The one fresh (time + randomness) ULID of a run."""
    return ULID()


def derived_ulid(base_ms: int, seq: int, *parts: str) -> ULID:
    digest = hashlib.sha256("\x1f".join((str(seq), *parts)).encode()).digest()
    return ULID.from_bytes((base_ms + seq).to_bytes(6, "big") + digest[:10])


def entity_id(kind: str, run_id: str, base_ms: int, seq: int, salt: str = "") -> str:
    """The id of the ``kind`` entity created by commit ``seq`` of ``run_id``."""
    return PREFIXES[kind] + str(derived_ulid(base_ms, seq, run_id, kind, salt))


def content_id(kind: str, canonical: str) -> str:
    """Content-addressed id (same content, same id), e.g. for constraints."""
    return PREFIXES[kind] + hashlib.sha256(canonical.encode()).hexdigest()[:32]
