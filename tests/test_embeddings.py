"""The ONNX embedding path gives sentence-transformers' vectors (cosine >= 0.999), from an
export the kernel makes itself; the backend is chosen by KERNEL_EMBEDDINGS."""

from __future__ import annotations

from pathlib import Path

import pytest

from embeddings import encoder, onnx_model

TEXTS = [
    "Build a Python CLI tool that reads a CSV file and outputs the top 10 rows",
    "x",
    "",
    "Déployer le service — vérifier la latence p99 < 200 ms 🚀",
    "design the ingest pipeline " * 120,  # beyond the model's 256 tokens: truncated alike
    "fix the auth thing",
]


def test_onnx_vectors_match_sentence_transformers_one_at_a_time_and_batched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNEL_MODEL_CACHE", str(tmp_path))
    path = onnx_model.export_path()
    assert path.is_relative_to(tmp_path) and not path.exists()
    onnx = onnx_model.load()  # exports first: nothing was cached
    assert path.exists()
    reference = encoder._SentenceTransformers().encode(TEXTS, 64)
    batched = onnx.encode(TEXTS, 64)
    single = [onnx.encode([t], 1)[0] for t in TEXTS]
    for ours in (batched, single):
        cosines = [sum(a * b for a, b in zip(x, y, strict=True))
                   for x, y in zip(ours, reference, strict=True)]
        assert min(cosines) >= 0.999, cosines
    assert all(abs(sum(v * v for v in vector) - 1) < 1e-5 for vector in batched)


def test_the_backend_is_onnx_by_default_and_a_wrong_choice_is_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNEL_EMBEDDINGS", raising=False)
    assert encoder.backend_name() == "onnx"
    monkeypatch.setenv("KERNEL_EMBEDDINGS", "torch")
    assert encoder.backend_name() == "torch"
    monkeypatch.setenv("KERNEL_EMBEDDINGS", "gpu")
    with pytest.raises(ValueError, match="KERNEL_EMBEDDINGS='gpu': use one of onnx, torch"):
        encoder.backend_name()
