"""Embedding benchmark: model load, texts per second one at a time (how a step embeds a
goal's summary) and in batches, on the backend in use; nothing cached."""

from __future__ import annotations

import time

from embeddings.encoder import BATCH_SIZE, Encoder, load_model
from kernel.bench.store import Figure


def _texts(count: int, tag: str) -> list[str]:
    return [f"{tag} goal {i}: read the {i % 13}th export, sort it by column {i % 7} and report "
            f"the top {i % 10 + 1} rows" for i in range(count)]


def bench_embeddings(single: int = 200, batched: int = 1000) -> list[Figure]:
    started = time.perf_counter()
    load_model()
    loaded = time.perf_counter() - started
    one = Encoder(None)
    started = time.perf_counter()
    for text in _texts(single, "single"):
        one.encode_one(text)
    single_rate = single / (time.perf_counter() - started)
    many = Encoder(None)
    started = time.perf_counter()
    many.encode(_texts(batched, "batched"))
    batched_rate = batched / (time.perf_counter() - started)
    return [Figure("model load (once per process)", loaded, "s"),
            Figure(f"one text per call ({single} texts)", single_rate, "texts/s"),
            Figure(f"batched, {BATCH_SIZE} per call ({batched} texts)", batched_rate, "texts/s")]
