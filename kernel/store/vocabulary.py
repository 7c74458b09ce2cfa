"""Which labels and relationship types the named statements can bring into a graph.

Every name a statement writes must be in the ontology (``kernel.store.ontology``): the
export writes, and the import accepts, only the ontology's names, so a statement that
creates anything else makes a graph that cannot be exported. This reads the statements'
text (every dialect, fragments included) without running them: the node and
relationship patterns of each CREATE and MERGE clause, and the labels a SET adds.
Template slots (``{{label}}``) are filled from the ontology by construction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_COMMENT = re.compile(r"//[^\n]*")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_SLOT = re.compile(r"\{\{\w+\}\}")
# A CREATE or MERGE clause runs until the next clause (or the end of a FOREACH body).
# Schema DDL (CREATE INDEX / CONSTRAINT ...) names existing labels: not a pattern.
_WRITE_CLAUSE = re.compile(
    r"\b(?:CREATE|MERGE)\b(?!\s+(?:INDEX|CONSTRAINT|VECTOR|RANGE|TEXT|FULLTEXT|POINT|"
    r"LOOKUP|OR\s+REPLACE|DATABASE)\b)(?P<body>.*?)"
    r"(?=\b(?:ON|SET|WITH|MATCH|OPTIONAL|RETURN|FOREACH|UNWIND|DELETE|DETACH|REMOVE|"
    r"CREATE|MERGE|CALL|WHERE|UNION|ORDER|LIMIT|SKIP)\b|\||\)\s*$|$)",
    re.IGNORECASE | re.DOTALL)
_SET_CLAUSE = re.compile(
    r"\bSET\b(?P<body>.*?)(?=\b(?:ON|WITH|MATCH|OPTIONAL|RETURN|FOREACH|UNWIND|DELETE|"
    r"DETACH|REMOVE|CREATE|MERGE|CALL|WHERE|UNION|ORDER|LIMIT|SKIP)\b|\||$)",
    re.IGNORECASE | re.DOTALL)
# (var:Label:Other {...}) in a pattern; [var:TYPE {...}] in a relationship pattern.
_NODE_LABELS = re.compile(r"\(\s*\w*\s*((?::\s*`?\w+`?\s*)+)")
_REL_TYPE = re.compile(r"\[\s*\w*\s*:\s*`?(\w+)`?")
# n:Label[:Other] as a SET item (not n.prop = ..., nor a map's key: value).
_SET_LABELS = re.compile(r"(?:^|,)\s*\w+\s*((?::\s*`?\w+`?\s*)+)(?=,|$)")
_LABEL = re.compile(r":\s*`?(\w+)`?")


@dataclass(frozen=True)
class Introduced:
    """Where a statement file can introduce a name."""

    path: str
    kind: str  # "label" | "relationship type"
    name: str


def _clean(text: str) -> str:
    """Without comments, string literals and template slots."""
    return _SLOT.sub("", _STRING.sub("''", _COMMENT.sub("", text)))


def _without_maps(text: str) -> str:
    """A SET clause's items without map literals (whose ``key: value`` read as labels)."""
    previous = None
    while previous != text:  # innermost first
        previous, text = text, re.sub(r"\{[^{}]*\}", "", text)
    return text


def introduced(text: str) -> tuple[set[str], set[str]]:
    """(labels, relationship types) that statement text can create or add."""
    text = _clean(text)
    labels: set[str] = set()
    types: set[str] = set()
    for clause in _WRITE_CLAUSE.finditer(text):
        body = clause.group("body")
        for group in _NODE_LABELS.findall(body):
            labels.update(_LABEL.findall(group))
        types.update(_REL_TYPE.findall(body))
    for clause in _SET_CLAUSE.finditer(text):
        for group in _SET_LABELS.findall(_without_maps(clause.group("body")).strip()):
            labels.update(_LABEL.findall(group))
    return labels, types


def outside(statements: Iterable[Path], root: Path, labels: Iterable[str],
            rel_types: Iterable[str]) -> list[Introduced]:
    """Every label and relationship type a statement file can introduce that is not in
    ``labels`` / ``rel_types``, sorted by file."""
    known_labels, known_types = frozenset(labels), frozenset(rel_types)
    found: list[Introduced] = []
    for path in sorted(statements):
        new_labels, new_types = introduced(path.read_text(encoding="utf-8"))
        name = str(path.relative_to(root))
        found += [Introduced(name, "label", n) for n in sorted(new_labels - known_labels)]
        found += [Introduced(name, "relationship type", n)
                  for n in sorted(new_types - known_types)]
    return found
