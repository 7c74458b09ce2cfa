"""Goal patterns: what makes two goals "the same kind of goal".

A pattern's identity is the normalized goal summary *and* the constraint signature (the
sorted distinct (type, domain) pairs of its constraints), so goals with the same words
but a different constraint structure are different patterns and never share history.
Similar patterns are found through the vector index over summary embeddings, keeping
only patterns with the same signature, above a similarity threshold.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from embeddings.encoder import Encoder
from kernel.core.constraints import Signature
from kernel.repositories import knowledge
from kernel.store.base import GraphStore

# Similarities are kept to 4 decimals: the two backends compute cosine in float32 in
# different orders and agree only to about 1e-6, and a score is recorded in the ledger
# and compared with thresholds, so its noise must not reach either.
SIMILARITY_DIGITS = 4

DEFAULT_THRESHOLD = 0.80  # on the (1 + cos) / 2 scale: cos >= 0.6
CANDIDATES = 50  # nearest patterns fetched before the signature filter


def normalize(summary: str) -> str:
    """Lowercase, punctuation to spaces, whitespace collapsed."""
    return " ".join(re.sub(r"[^\w\s]", " ", summary.lower()).split())


def signature_text(signature: Signature) -> str:
    return json.dumps([list(pair) for pair in signature])


def pattern_id(summary: str, signature: Signature) -> str:
    digest = hashlib.sha256(f"{normalize(summary)}\n{signature_text(signature)}".encode())
    return f"goal_pattern:{digest.hexdigest()[:24]}"


@dataclass(frozen=True)
class Similar:
    id: str
    summary: str
    similarity: float


class Patterns:
    def __init__(self, store: GraphStore, encoder: Encoder,
                 threshold: float = DEFAULT_THRESHOLD) -> None:
        self.store = store
        self.encoder = encoder
        self.threshold = threshold

    def ensure(self, summary: str, signature: Signature,
               neighbours: list[Similar] | None = None) -> str:
        """The goal's pattern (created with its embedding the first time), linked to
        ``neighbours`` (found before: the search leaves the pattern itself out)."""
        row = self.row(summary, signature, neighbours)
        knowledge.upsert_pattern(self.store, row)
        return str(row["id"])

    def row(self, summary: str, signature: Signature,
            neighbours: list[Similar] | None = None) -> dict[str, Any]:
        """The pattern as the store_pattern fragment takes it (``$pattern``), for a commit
        that carries it."""
        return {"id": pattern_id(summary, signature), "summary": summary,
                "caption": summary[:80], "normalized": normalize(summary),
                "signature": signature_text(signature),
                "vector": self.encoder.encode_one(normalize(summary)),
                "neighbours": [{"id": s.id, "similarity": s.similarity}
                               for s in neighbours or []]}

    def similar(self, summary: str, signature: Signature, k: int = 5) -> list[Similar]:
        rows = knowledge.similar_to(
            self.store, self.encoder.encode_one(normalize(summary)), signature_text(signature),
            CANDIDATES, pattern_id(summary, signature), self.threshold, k)
        return [Similar(r["id"], r["summary"], round(float(r["similarity"]), SIMILARITY_DIGITS))
                for r in rows]
