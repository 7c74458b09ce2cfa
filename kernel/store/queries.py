"""The catalogue of named Cypher statements under ``cypher/``.

Each statement is a file; its path below ``cypher/`` (without ``.cypher``) is its
name. A file under ``cypher/<dialect>/`` overrides the shared one for that
backend, which is the only place dialect differences live. Each file starts with
``//`` comment lines; ``// mode: read|write|schema`` is required and
``// template: a, b`` declares ontology identifiers filled in as ``{{a}}``.
``// cache: read`` marks a read of a run's own state that may be served from the read
cache while a run steps (see ``GraphStore.read_cache``), ``// cache: immutable`` a read of
nodes that never change once written (constraints, artifacts by id); ``// cache: keep`` marks a write
that changes nothing such a read returns (an observation: a log line, a ledger entry), so
the cache survives it. ``// changes: goal/get, attempt/of_goal`` on a write names the
cached reads it can change: only their answers are dropped (``// changes: nothing``:
none of them). Any other write empties the
cache. With ``KERNEL_AUDIT_READ_CACHE=1`` (the tests set it) every answer served from the
cache is read again and compared, so a ``changes`` list that misses a read fails loudly.
``// changes: goal/get(touched)`` drops only some of that read's answers: those whose one
parameter is among the ids in the write's ``touched`` column (a null there, or no row at
all, drops every answer of the read). ``// refreshes: goal/get`` on a write says its
rows also answer that read (which returns one column, ``RETURN name``; the write returns
that column too, and takes the read's parameters): a one-row answer is kept as the
read's cached answer for the same parameters, so the step's next read of what it just
wrote costs no round trip. With the audit on, the read is made anyway and compared.

A line ``// include: NAME`` in a statement's body is replaced by the fragment
``cypher/_fragments/NAME.cypher`` (its leading comment lines dropped), so a clause that
several commits share (storing the step's log lines, its ledger entries) is written once;
``cypher/<dialect>/_fragments/NAME.cypher`` overrides it for that backend.
The statement's parameters, slots and lint are those of the expanded text.

A statement file is read, and its marks checked against the reads they name, when the
statement is first run: a command reads only the files of what it runs.
``QueryCatalog.check`` reads and checks them all (the tests do, for both dialects).

A fragment whose header says ``// needs: spend`` does nothing when ``$spend`` is null
or an empty list; the statement is then sent without it, with the fragment's
``// instead:`` line (if any) in its place, binding what the rest of the statement reads
from it. Every empty clause still costs the server time on each execution, so a commit
carries only the clauses of the riders it has (see ``NamedQuery.render``).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kernel.errors import ParameterError, TemplateError, UnknownQueryError
from kernel.store.ontology import LABEL_NAMES, LABELS, REL_TYPE_NAMES, VECTORS

Mode = Literal["read", "write", "schema"]
DIALECTS = ("falkordb", "neo4j")

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_LINE_COMMENT = re.compile(r"//[^\n]*")
_SLOT = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
_HEADER = re.compile(r"^//\s*(mode|template|cache|changes|refreshes)\s*:\s*(.*?)\s*$")
_KEYED = re.compile(r"([A-Za-z_][\w/]*)(?:\((\w+)\))?")
_SINGLE_COLUMN = re.compile(r"\bRETURN\s+([A-Za-z_][A-Za-z0-9_]*)\s*\Z")
_INCLUDE = re.compile(r"^[ \t]*//[ \t]*include[ \t]*:[ \t]*(\S*)[ \t]*$", re.M)
_FRAGMENT_HEADER = re.compile(r"^//\s*(needs|instead)\s*:\s*(.*?)\s*$")
_PIECE = re.compile("\x00([0-9]+)\x00")
FRAGMENTS = "_fragments"

_INDEXED_PROPS = frozenset({"id"}) | {p for spec in LABELS for p in spec.indexed}
_VECTOR_PROPS = frozenset(v.prop for v in VECTORS)
_VECTOR_INDEXES = frozenset(v.index_name for v in VECTORS)
# Which vocabulary each template slot may be filled from.
_SLOT_VOCABULARY: dict[str, frozenset[str]] = {
    "label": LABEL_NAMES,
    "from_label": LABEL_NAMES,
    "to_label": LABEL_NAMES,
    "type": REL_TYPE_NAMES,
    "prop": _INDEXED_PROPS | _VECTOR_PROPS,
    "index_name": _VECTOR_INDEXES,
    "dimensions": frozenset(str(v.dimensions) for v in VECTORS),
}


def statement_parameters(text: str) -> frozenset[str]:
    """The ``$names`` a statement uses, ignoring comments and string literals."""
    body = _STRING.sub("''", _LINE_COMMENT.sub("", text))
    return frozenset(_PARAM.findall(body))


@dataclass(frozen=True)
class NamedQuery:
    name: str
    dialect: str | None
    path: Path
    text: str
    mode: Mode
    slots: tuple[str, ...] = ()
    parameters: frozenset[str] = field(default_factory=frozenset)
    cache: Literal["read", "immutable", "keep"] | None = None
    # For a write: the cached reads it can change (None: any of them).
    changes: frozenset[str] | None = None
    # For a write: the cached reads its one-row answer also answers.
    refreshes: tuple[str, ...] = ()
    # For a write: (read, column) pairs: only the answers for the ids in that column change.
    keyed_changes: tuple[tuple[str, str], ...] = ()
    # The one column a statement ending ``RETURN name`` returns (None otherwise).
    single_column: str | None = None
    # The text with a placeholder for each fragment left out when its parameter is
    # empty, and each such fragment's (parameter, body, what stands in for it).
    skeleton: str = ""
    optional: tuple[tuple[str, str, str], ...] = ()

    def render(self, identifiers: Mapping[str, str] | None = None,
               params: Mapping[str, Any] | None = None) -> str:
        """The text sent to the server: template slots filled with ontology names
        (anything else refused), comment lines dropped and, with ``params``, the
        fragments whose parameter is empty left out."""
        present = tuple(params is None or not _empty(params.get(name))
                        for name, _, _ in self.optional)
        text = self.variant(present)
        given = dict(identifiers or {})
        if set(given) != set(self.slots):
            raise TemplateError(
                f"query '{self.name}' takes identifiers {sorted(self.slots)}, got {sorted(given)}"
            )
        for slot, value in given.items():
            allowed = _SLOT_VOCABULARY.get(slot, frozenset())
            if value not in allowed:
                raise TemplateError(
                    f"query '{self.name}': {value!r} is not a known {slot} of the kernel ontology"
                )
        return _SLOT.sub(lambda m: given[m.group(1)], text) if self.slots else text

    def variant(self, present: tuple[bool, ...]) -> str:
        """The text with the optional fragments marked absent in ``present`` left out."""
        return _variant(self.skeleton, self.optional, present)

    def check_parameters(self, params: Mapping[str, Any]) -> None:
        missing = sorted(self.parameters - set(params))
        extra = sorted(set(params) - self.parameters)
        if missing:
            names = ", ".join(f"${p}" for p in missing)
            raise ParameterError(f"query '{self.name}' needs parameter(s) {names}")
        if extra:
            names = ", ".join(f"${p}" for p in extra)
            raise ParameterError(
                f"query '{self.name}' does not use parameter(s) {names} "
                f"(it uses: {', '.join(sorted(self.parameters)) or 'none'})"
            )


def _header(text: str) -> dict[str, str]:
    """The ``// key: value`` marks of the leading comment lines (the last of each wins)."""
    marks: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        match = _HEADER.match(line)
        if match:
            marks[match.group(1)] = match.group(2)
    return marks


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(n.strip() for n in (value or "").split(",") if n.strip())


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, list) and not value)


def _filled(skeleton: str, optional: tuple[tuple[str, str, str], ...],
            present: tuple[bool, ...]) -> str:
    """The skeleton with each optional fragment's body, or its stand-in where absent."""
    def piece(match: re.Match[str]) -> str:
        number = int(match.group(1))
        _, body, instead = optional[number]
        return body if present[number] else instead
    return _PIECE.sub(piece, skeleton)


@functools.lru_cache(maxsize=4096)
def _variant(skeleton: str, optional: tuple[tuple[str, str, str], ...],
             present: tuple[bool, ...]) -> str:
    # comment lines are the reader's, not the server's (they would go to its log too)
    lines = _filled(skeleton, optional, present).splitlines()
    return "\n".join(line for line in lines
                     if line.strip() and not line.lstrip().startswith("//"))


def _fragment_body(path: Path) -> tuple[str, dict[str, str]]:
    """A fragment's text without its leading comment lines, and its header marks."""
    lines = path.read_text(encoding="utf-8").splitlines()
    marks: dict[str, str] = {}
    while lines and lines[0].startswith("//"):
        match = _FRAGMENT_HEADER.match(lines.pop(0))
        if match:
            marks[match.group(1)] = match.group(2)
    return "\n".join(lines).strip("\n"), marks


def _expand(text: str, path: Path, fragments: Sequence[Path]
            ) -> tuple[str, str, tuple[tuple[str, str, str], ...]]:
    """Replace each ``// include: NAME`` line with that fragment, from the first of
    ``fragments`` that has it (the dialect's own, then the shared ones; no nesting).
    Returns the full text, and the skeleton and optional pieces (``// needs:``)."""
    optional: list[tuple[str, str, str]] = []

    def body(match: re.Match[str]) -> str:
        name = match.group(1)
        named = re.fullmatch(r"[a-z_][a-z0-9_]*", name) is not None
        found = [d / f"{name}.cypher" for d in fragments
                 if named and (d / f"{name}.cypher").is_file()]
        if not found:
            where = ", ".join(map(str, fragments)) or "no fragments directory"
            raise QueryFileError(f"{path}: '// include: {name}' names no fragment in {where}")
        fragment, marks = _fragment_body(found[0])
        if _INCLUDE.search(fragment):
            raise QueryFileError(f"{found[0]}: a fragment cannot include another")
        needs = marks.get("needs")
        if needs is None:
            return fragment
        if f"${needs}" not in fragment:
            raise QueryFileError(f"{found[0]}: '// needs: {needs}' but it never uses ${needs}")
        optional.append((needs, fragment, marks.get("instead", "")))
        return f"\x00{len(optional) - 1}\x00"
    skeleton = _INCLUDE.sub(body, text)
    pieces = tuple(optional)
    return _filled(skeleton, pieces, (True,) * len(pieces)), skeleton, pieces


def parse_query_file(name: str, dialect: str | None, path: Path,
                     fragments: Sequence[Path] = ()) -> NamedQuery:
    """Read one statement file; ``fragments`` are where its ``// include:`` lines resolve,
    in order."""
    raw = path.read_text(encoding="utf-8")
    marks = _header(raw)
    text, skeleton, optional = _expand(raw, path, fragments)
    mode, cache, slots = marks.get("mode"), marks.get("cache"), _names(marks.get("template"))
    changes, keyed = None, []
    if "changes" in marks:  # "nothing": no cached read
        named = []
        for item in _names(marks["changes"]):
            match = _KEYED.fullmatch(item)
            if match is None:
                raise QueryFileError(f"{path}: '// changes: {item}' is neither a statement "
                                     "name nor 'name(column)'")
            named.append(match.group(1))
            if match.group(2):
                keyed.append((match.group(1), match.group(2)))
        changes = frozenset(n for n in named if n != "nothing")
    if mode not in ("read", "write", "schema"):
        raise QueryFileError(f"{path}: first comment lines must declare '// mode: read|write|schema'")
    if (mode, cache) not in (("read", "read"), ("read", "immutable"), ("write", "keep"),
                             (mode, None)):
        raise QueryFileError(f"{path}: '// cache: {cache}' is for a read ('read', 'immutable') "
                             "or a write that leaves run state alone ('keep')")
    if changes is not None and (mode != "write" or cache is not None):
        raise QueryFileError(f"{path}: '// changes:' is for a write without a '// cache:' mark")
    refreshes = _names(marks.get("refreshes"))
    if refreshes and (mode != "write" or cache is not None):
        raise QueryFileError(f"{path}: '// refreshes:' is for a write without a '// cache:' mark")
    used_slots = set(_SLOT.findall(text))
    if used_slots != set(slots):
        raise QueryFileError(
            f"{path}: '// template:' declares {sorted(slots)} but the text uses {sorted(used_slots)}"
        )
    unknown = [s for s in slots if s not in _SLOT_VOCABULARY]
    if unknown:
        raise QueryFileError(f"{path}: unknown template slot(s) {unknown}")
    single = _SINGLE_COLUMN.search(_LINE_COMMENT.sub("", text))
    return NamedQuery(
        name=name, dialect=dialect, path=path, text=text, mode=mode,  # type: ignore[arg-type]
        slots=slots, parameters=statement_parameters(text),
        cache=cache,  # type: ignore[arg-type]
        changes=changes, refreshes=refreshes, keyed_changes=tuple(keyed),
        single_column=single.group(1) if single else None,
        skeleton=skeleton, optional=optional,
    )


def _returns(write: NamedQuery, column: str) -> bool:
    """Whether the statement's final RETURN has an item named ``column``."""
    clause = _LINE_COMMENT.sub("", write.text).rsplit("RETURN", 1)[-1]
    return re.search(rf"(?:^|,)\s*(?:[^,]*\bAS\s+)?{column}\s*(?:,|\Z)", clause) is not None


class QueryFileError(TemplateError):
    """A ``.cypher`` file in the catalogue is itself malformed."""


class QueryCatalog:
    """Named statements for one dialect, with shared files as the fallback.

    A statement file is read and checked when the statement is first asked for (with the
    reads its ``// changes:`` and ``// refreshes:`` marks name), so opening a store reads
    no file and `kernel status` parses the three statements it runs, not all of them.
    :meth:`check` (and iterating) reads and checks the whole catalogue; the tests do.
    """

    def __init__(self, root: Path, dialect: str) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}")
        self.root = root
        self.dialect = dialect
        # a dialect's fragment overrides the shared one, in shared statements too
        self._fragments = (root / dialect / FRAGMENTS, root / FRAGMENTS)
        self._paths: dict[str, tuple[str | None, Path]] = {
            name: (None, path) for name, path in _files(root, None)}
        self._paths.update({name: (dialect, path) for name, path in _files(root / dialect,
                                                                               dialect)})
        self._queries: dict[str, NamedQuery] = {}  # parsed
        self._checked: dict[str, NamedQuery] = {}  # parsed, and the reads it names checked

    def check(self) -> QueryCatalog:
        """Read and check every statement: a malformed file raises :class:`QueryFileError`."""
        for name in self.names():
            self.get(name)
        return self

    def _parsed(self, name: str) -> NamedQuery:
        """The statement as written, without checking the reads it names."""
        query = self._queries.get(name)
        if query is None:
            dialect, path = self._paths[name]
            query = parse_query_file(name, dialect, path, self._fragments)
            self._queries[name] = query
        return query

    def _check_marks(self, query: NamedQuery) -> None:
        for read in sorted(query.changes or ()):
            if read not in self._paths or self._parsed(read).cache != "read":
                raise QueryFileError(f"{query.path}: '// changes: {read}' names no "
                                     "statement marked '// cache: read'")
        for read in query.refreshes:
            self._check_refresh(query, read)
        for read, column in query.keyed_changes:
            self._check_keyed(query, read, column)

    def _check_keyed(self, write: NamedQuery, name: str, column: str) -> None:
        read = self._parsed(name)  # a named cached read: checked above
        problem = None
        if len(read.parameters) != 1:
            problem = "names a read that does not take exactly one parameter"
        elif not _returns(write, column):
            problem = f"but the write does not return the column '{column}'"
        if problem:
            raise QueryFileError(f"{write.path}: '// changes: {name}({column})' {problem}")

    def _check_refresh(self, write: NamedQuery, name: str) -> None:
        read = self._parsed(name) if name in self._paths else None
        problem = None
        if read is None or read.cache != "read":
            problem = "names no statement marked '// cache: read'"
        elif read.single_column is None or read.slots:
            problem = "names a read that is a template or does not end 'RETURN name'"
        elif not _returns(write, read.single_column):
            problem = f"but the write does not return the column '{read.single_column}'"
        elif not read.parameters <= write.parameters:
            problem = (f"but the write lacks its parameter(s) "
                       f"{sorted(read.parameters - write.parameters)}")
        elif write.changes is not None and name not in write.changes:
            problem = "but '// changes:' does not name it"
        if problem:
            raise QueryFileError(f"{write.path}: '// refreshes: {name}' {problem}")

    def names(self) -> list[str]:
        return sorted(self._paths)

    def get(self, name: str) -> NamedQuery:
        checked = self._checked.get(name)
        if checked is not None:
            return checked
        if name not in self._paths:
            close = difflib.get_close_matches(name, self._paths, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownQueryError(
                f"no named query '{name}' in {self.root} for the {self.dialect} backend{hint}"
            ) from None
        query = self._parsed(name)
        self._check_marks(query)
        self._checked[name] = query
        return query

    def __iter__(self) -> Iterator[NamedQuery]:
        return iter(self.get(n) for n in self.names())


def _files(base: Path, dialect: str | None) -> list[tuple[str, Path]]:
    if not base.is_dir():
        return []
    found = []
    for path in sorted(base.rglob("*.cypher")):
        rel = path.relative_to(base)
        if rel.parts[0] == FRAGMENTS or (dialect is None and rel.parts[0] in DIALECTS):
            continue
        found.append((rel.with_suffix("").as_posix(), path))
    return found


def neo4j_bound(root: Path) -> list[NamedQuery]:
    """Every statement the Neo4j backend can run (shared files plus ``neo4j/`` overrides)."""
    return list(QueryCatalog(root, "neo4j").check())
