"""The hash-chained ledger of proposals.

Everything probabilistic (model output, sandbox results) enters the kernel as a
proposal recorded here before the kernel acts on it. Each entry carries the hash of the
previous one; an entry's hash covers its position, kind, operation, goal, source and
the sha256 of its canonical content. Any altered, missing or reordered entry breaks the
chain, and ``verify`` names the first one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from kernel.core.envelopes import canonical_json
from kernel.core.run import GENESIS, Run
from kernel.errors import KernelError
from kernel.store.base import GraphStore

EntryKind = Literal["proposal", "observation", "denial", "decision", "refusal", "failure"]


class LedgerEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    run_id: str
    index: int = Field(ge=0)
    kind: EntryKind
    operation: str
    goal_id: str | None = None
    source: str
    content: str  # canonical JSON
    content_hash: str
    prev_hash: str
    hash: str

    def expected_id(self) -> str:
        return entry_id(self.run_id, self.index)

    def expected_hash(self) -> str:
        return entry_hash(self.run_id, self.index, self.kind, self.operation, self.goal_id,
                          self.source, self.content_hash, self.prev_hash)

    def data(self) -> Any:
        return json.loads(self.content)


def entry_id(run_id: str, index: int) -> str:
    return f"ledger:{run_id.removeprefix('run:')}-{index:06d}"


def entry_hash(run_id: str, index: int, kind: str, operation: str, goal_id: str | None,
               source: str, content_hash: str, prev_hash: str) -> str:
    header = canonical_json([run_id, index, kind, operation, goal_id, source, content_hash,
                             prev_hash])
    return hashlib.sha256(header.encode()).hexdigest()


ProblemKind = Literal["altered", "missing", "reordered", "malformed"]


@dataclass(frozen=True)
class Problem:
    index: int
    what: ProblemKind
    detail: str

    def __str__(self) -> str:
        return f"entry {self.index}: {self.what}: {self.detail}"


class Ledger:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.store = run.store
        self._head: tuple[str, int] | None = None  # (hash, size) after our last append

    def append(self, kind: EntryKind, operation: str, source: str, content: Any,
               goal_id: str | None = None, reuse_key: str | None = None) -> LedgerEntry:
        """Chain one entry; it is stored by the run's next commit (or :meth:`Run.flush`).

        An entry rides the first commit made after it, never a later one, so whatever the
        graph holds that was built from a proposal has that proposal on record; a crash
        before that commit loses the entry and the state built from it alike, and the
        resumed run asks again. The chain head is read once, then kept: the storing
        statement checks the stored size, so a chain another writer moved is refused,
        not forked. ``reuse_key`` (an answered call's request as its source sees it) is
        stored beside the entry, outside its hash: it only lets a later identical request
        find this answer (:func:`answered_before`)."""
        if self._head is None:
            head, size, _ = self._state()
        else:
            head, size = self._head
        text = canonical_json(content)
        content_hash = hashlib.sha256(text.encode()).hexdigest()
        entry = LedgerEntry(
            id=entry_id(self.run.run_id, size), run_id=self.run.run_id,
            index=size, kind=kind, operation=operation, goal_id=goal_id, source=source,
            content=text, content_hash=content_hash, prev_hash=head,
            hash=entry_hash(self.run.run_id, size, kind, operation, goal_id, source, content_hash,
                            head))
        props = {**entry.model_dump(exclude_none=True),
                 "caption": f"#{size} {kind} {operation}"}
        if reuse_key is not None:
            props["reuse_key"] = reuse_key
        self.run.step.pending_entries.append({"props": props,
                                         "prev_id": entry_id(self.run.run_id, size - 1)})
        self._head = (entry.hash, size + 1)
        return entry

    def entries(self) -> list[LedgerEntry]:
        """The whole chain, stored first if entries are pending."""
        self.run.flush()
        return load_entries(self.store, self.run.run_id)[2]

    def size(self) -> int:
        """How many entries the chain holds (the index the next append takes)."""
        return self._head[1] if self._head is not None else self._state()[1]

    def _state(self) -> tuple[str, int, list[LedgerEntry]]:
        return load_entries(self.store, self.run.run_id)


def load_entries(store: GraphStore, run_id: str) -> tuple[str, int, list[LedgerEntry]]:
    rows = store.run("ledger/entries", {"run_id": run_id})
    if not rows:
        raise KernelError(f"no run {run_id!r}; 'kernel runs' lists them")
    raw = [e for e in rows[0]["entries"] if e]
    entries = [_entry(e) for e in raw]
    return rows[0]["head"] or GENESIS, int(rows[0]["size"]), entries


_BESIDE = ("caption", "reuse_key")  # node properties outside the entry and its hash


def _entry(props: dict[str, Any]) -> LedgerEntry:
    return LedgerEntry.model_validate({k: v for k, v in props.items() if k not in _BESIDE})


def answered_before(store: GraphStore, reuse_key: str) -> LedgerEntry | None:
    """The first answer in this graph (earliest run, then chain order) to a request whose
    reuse key is ``reuse_key``; None when none was answered."""
    rows = store.run("ledger/answered_before", {"reuse_key": reuse_key})
    return _entry(rows[0]["entry"]) if rows else None


def verify_chain(entries: Iterable[LedgerEntry], head: str | None = None,
                 size: int | None = None) -> list[Problem]:
    """Every problem in chain order (empty: the ledger is intact)."""
    problems: list[Problem] = []
    prev = GENESIS
    count = 0
    chain = list(entries)
    indices = {e.index for e in chain}
    for position, entry in enumerate(chain):
        count += 1
        if entry.index != position:
            kind: ProblemKind = "reordered" if position in indices else "missing"
            problems.append(Problem(position, kind, f"found index {entry.index} at position "
                                                    f"{position}"))
            return problems
        actual = hashlib.sha256(entry.content.encode()).hexdigest()
        if actual != entry.content_hash:
            problems.append(Problem(position, "altered", "content does not match its hash"))
        elif entry.prev_hash != prev:
            problems.append(Problem(position, "reordered",
                                    "its previous-hash does not match the entry before it"))
        elif entry.hash != entry.expected_hash():
            problems.append(Problem(position, "altered", "its hash does not match its fields"))
        elif entry.id != entry.expected_id():
            problems.append(Problem(position, "altered", f"its id is not {entry.expected_id()}"))
        if problems:
            return problems
        prev = entry.hash
    if size is not None and count != size:
        problems.append(Problem(count, "missing", f"the run records {size} entries, "
                                                  f"{count} are present"))
    elif head is not None and count and prev != head:
        problems.append(Problem(count - 1, "altered", "the chain does not end at the run's head"))
    return problems


def dump_entries(entries: Iterable[LedgerEntry]) -> str:
    """The ledger as JSON Lines (canonical, one entry per line)."""
    return "".join(canonical_json(e.model_dump(exclude_none=True)) + "\n" for e in entries)


def verify_file(data: bytes) -> list[Problem]:
    """Verify an exported ledger file byte for byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [Problem(0, "malformed", f"not UTF-8 ({exc.reason})")]
    if text and not text.endswith("\n"):
        return [Problem(text.count("\n"), "malformed", "the last line is cut short")]
    entries, problems = parse_entries(text)
    return problems or verify_chain(entries)


def parse_entries(text: str) -> tuple[list[LedgerEntry], list[Problem]]:
    """Parse an exported ledger strictly: a line must be the canonical form of its entry,
    so any changed byte is caught even where the JSON would mean the same."""
    entries: list[LedgerEntry] = []
    lines = text.split("\n")  # only "\n" ends a line (splitlines would also split on \v, \f ...)
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines):
        try:
            entry = LedgerEntry.model_validate_json(line)
        except ValueError as exc:
            return entries, [Problem(number, "malformed", str(exc).splitlines()[0])]
        if canonical_json(entry.model_dump(exclude_none=True)) != line:
            return entries, [Problem(number, "malformed", "not in canonical form")]
        entries.append(entry)
    return entries, []
