"""The ONNX embedding path gives sentence-transformers' vectors (cosine >= 0.9999), from a
graph the kernel builds itself from the packaged weights without torch; the backend is
chosen by KERNEL_EMBEDDINGS."""

from __future__ import annotations

import os
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
    "Parse the rows of a CSV file into records",
    "Sum the totals per customer over the parsed rows",
    "Train a document classifier on RVL-CDIP to 90% accuracy within $300",
    "An autonomous SWE agent at 80% on SWE-bench Lite in 24 h for under $500",
    "Design a momentum strategy with a Sharpe ratio above 1.2",
    "Write unit tests for the ingest pipeline's dedupe stage",
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
        assert min(cosines) >= 0.9999, cosines
    assert all(abs(sum(v * v for v in vector) - 1) < 1e-5 for vector in batched)


def test_the_graph_is_built_and_run_without_torch(tmp_path: Path) -> None:
    """The kernel's own path never imports torch: with torch made unimportable, the graph
    is built from the weights and a text is embedded."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['torch'] = None; sys.modules['sentence_transformers'] = None\n"
            "from embeddings import onnx_model\n"
            "vector = onnx_model.load().encode(['fix the auth thing'], 1)[0]\n"
            "assert len(vector) == 384, len(vector)\n"
            "assert 'transformers' not in sys.modules\n"
            "print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "KERNEL_MODEL_CACHE": str(tmp_path)}, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    assert list(tmp_path.rglob("*.onnx"))


def test_the_backend_is_onnx_by_default_and_a_wrong_choice_is_named(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KERNEL_EMBEDDINGS", raising=False)
    assert encoder.backend_name() == "onnx"
    monkeypatch.setenv("KERNEL_EMBEDDINGS", "torch")
    assert encoder.backend_name() == "torch"
    monkeypatch.setenv("KERNEL_EMBEDDINGS", "gpu")
    with pytest.raises(ValueError, match="KERNEL_EMBEDDINGS='gpu': use one of onnx, torch"):
        encoder.backend_name()
