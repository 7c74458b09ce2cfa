"""``--suggest`` values as candidate outputs, checked before anything is stored.

Words are a text candidate. ``@PATH`` reads a file: JSON in the shape a ``resolve``
proposal has (content, files, tests, metrics) is taken whole; a ``.py`` file is code that
runs as ``main.py``; any other file is a document. So a person can offer what the model
would have offered, and is weighed the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from kernel.errors import ConfigError
from kernel.protocol.solve_models import ResolutionOutput
from kernel.protocol.suggestion_models import Suggestion
from kernel.user_files import read_user_text

SUGGEST_HELP = ("a candidate for the goal, weighed like the model's own (repeatable): words, "
                "or @PATH of a .py file, a document, or a JSON resolve output")
MAX_BYTES = 1_000_000
_DOCUMENTS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".rst": "rst"}


def parse_suggestion(text: str, author: str) -> Suggestion:
    """One ``--suggest`` by ``author``; a ConfigError names what is wrong and what to give."""
    if not author.strip() or len(author.strip()) > 200:
        raise ConfigError("--suggested-by must be a name of 1 to 200 characters (recorded "
                          "with the suggestions)")
    if not text.strip():
        raise ConfigError("--suggest is empty: give the idea in words, or @PATH of a file")
    if not text.startswith("@"):
        output = ResolutionOutput(artifact_type="idea", format="text", content=text.strip())
        return Suggestion(author=author.strip(), output=output)
    return Suggestion(author=author.strip(), output=_from_file(Path(text[1:])))


def _from_file(path: Path) -> ResolutionOutput:
    where = f"--suggest @{path}"
    data = read_user_text(path, where, max_bytes=MAX_BYTES)
    if not data.strip():
        raise ConfigError(f"{where} is empty")
    suffix = path.suffix.lower()
    if suffix == ".json":
        return _resolve_output(where, data)
    if suffix == ".py":
        return ResolutionOutput(artifact_type="code", format="python", content=data)
    return ResolutionOutput(artifact_type="doc", format=_DOCUMENTS.get(suffix, "text"),
                            content=data)


def _resolve_output(where: str, data: str) -> ResolutionOutput:
    try:
        return ResolutionOutput.model_validate(json.loads(data))
    except ValueError as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "the document"
            raise ConfigError(f"{where}: {field}: {first['msg']} (a JSON suggestion has "
                              "the fields of a resolve output: artifact_type, format, "
                              "content, files, tests, metrics)") from None
        raise ConfigError(f"{where} is not valid JSON: {exc}") from None
