"""Symbols found by what they do: each symbol's name and the first sentence of its
docstring embedded at ingest (all-MiniLM-L6-v2, the encoder goal similarity uses), and
the symbols nearest to a goal's words read through the vector index over them.

What is embedded is kept small, because the model runs on one thread (for vectors that
are the same on every machine) at about 10 ms of CPU per short text: only the symbols of
code outside the tests (not whole files or chunks, not tests; the tests a change needs
are reached through the failing run and the TESTS edges), each as a sentence of at most
TEXT_CHARS, batched by length so a batch pads little. This project's own 2,000 symbols
take about 20 s of CPU once. The encoder's cache is keyed by
the text's hash, so a symbol whose name, signature and docstring did not change is not
embedded again, even when its file changed; files whose content did not change are not
parsed at all.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from embeddings.encoder import BATCH_SIZE, Encoder
from kernel.repositories import code_graph
from kernel.repositories.code_graph import NearRow
from kernel.store.base import GraphStore

CANDIDATES = 100  # nearest symbols fetched (of every repository) before the repository filter
MAX_CANDIDATES = 3200  # widened up to this when other repositories crowd this one out
NEAR_SYMBOLS = 8  # symbols of this repository kept, most similar first
NEAR_FILES = 3  # files shown for them
MIN_SIMILARITY = 0.65  # on the (1 + cos) / 2 scale: cos >= 0.3; unrelated code scores below
SIMILARITY_DIGITS = 4  # the backends agree only to about 1e-6: ranks must not see that noise
TEXT_CHARS = 160
_SPLIT = re.compile(r"[._]+")


def code_encoder(data_dir: Path) -> Encoder:
    """The encoder with the deployment's cache (the same file goal similarity uses)."""
    return Encoder(data_dir / "embeddings.sqlite")


def symbol_text(props: dict[str, Any]) -> str:
    """What a symbol is embedded as: its qualified name in words (``wordstats count
    words``) and its docstring's first sentence (a signature's types cost tokens and say
    little of what the code does)."""
    words = " ".join(w for w in _SPLIT.split(str(props["qname"])) if w)
    doc = str(props.get("doc") or "").split(". ")[0]
    return f"{words}. {doc}".strip()[:TEXT_CHARS]


def embed_symbols(store: GraphStore, encoder: Encoder, rows: list[dict[str, Any]]) -> int:
    """Embed the symbols written outside test code (``rows`` as ``repo/store_symbols``
    takes them); the number the model actually ran on (the others came from the cache)."""
    texts = sorted(((symbol_text(r["props"]), r["id"]) for r in rows
                    if not r["props"]["in_test"]), key=lambda t: (len(t[0]), t[1]))
    before = encoder.embedded
    for start in range(0, len(texts), BATCH_SIZE):
        batch = texts[start:start + BATCH_SIZE]
        vectors = encoder.encode([text for text, _ in batch])
        code_graph.set_symbol_embeddings(store, [
            {"id": symbol_id, "vector": v}
            for (_, symbol_id), v in zip(batch, vectors, strict=True)])
    return encoder.embedded - before


def near_goal(store: GraphStore, repo: str, encoder: Encoder, goal: str) -> list[NearRow]:
    """The repository's symbols nearest to ``goal`` by meaning, above MIN_SIMILARITY, most
    similar first (ties by file and line)."""
    vector = encoder.encode_one(goal)
    candidates = CANDIDATES
    while True:
        rows = code_graph.symbols_near(store, repo, vector, candidates, NEAR_SYMBOLS)
        if len(rows) >= NEAR_SYMBOLS or candidates >= MAX_CANDIDATES:
            break
        candidates *= 4
    found = [NearRow(name=r["name"], file=r["file"], line=int(r["line"]),
                     similarity=round(float(r["similarity"]), SIMILARITY_DIGITS)) for r in rows]
    kept = [r for r in found if r["similarity"] >= MIN_SIMILARITY]
    return sorted(kept, key=lambda r: (-r["similarity"], r["file"], r["line"]))


def files_near_goal(store: GraphStore, repo: str, encoder: Encoder, goal: str) -> list[str]:
    """The files of the NEAR_FILES nearest symbols' files, the nearest first."""
    files: list[str] = []
    for row in near_goal(store, repo, encoder, goal):
        if row["file"] not in files:
            files.append(row["file"])
    return files[:NEAR_FILES]


__all__ = ["code_encoder", "embed_symbols", "files_near_goal", "near_goal", "symbol_text"]
