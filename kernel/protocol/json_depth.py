"""How deep a JSON document nests, found before it is parsed.

Python's parser recurses once per level: a valid document a few hundred kilobytes long
nested 200,000 deep ends in RecursionError, not in a reason. Untrusted JSON (a model's
answer, a line of a graph file) is measured first and refused when it nests too deep.

>>> nesting('{"a": [1, {"b": "[[[["}]}')
3
>>> too_deep("[" * 100 + "]" * 100, 64)
'it is nested more than 64 deep'
"""

from __future__ import annotations

import re

MAX_DEPTH = 64
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def nesting(document: str | bytes, stop: int | None = None) -> int:
    """The deepest level of arrays and objects, strings left out (their brackets are
    text), counted no further than past ``stop``. For malformed JSON the count is a
    bound the parser will refuse anyway."""
    data = document.encode("utf-8", "surrogatepass") if isinstance(document, str) \
        else document
    depth = deepest = 0
    for match in _BRACKET.finditer(_STRING.sub(b'""', data)):
        if match.group() in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
            if stop is not None and deepest > stop:
                break
        else:
            depth -= 1
    return deepest


def too_deep(document: str | bytes, limit: int = MAX_DEPTH) -> str | None:
    """Why ``document`` may not be parsed (it nests past ``limit``), or None."""
    if nesting(document, stop=limit) > limit:
        return f"it is nested more than {limit} deep"
    return None
