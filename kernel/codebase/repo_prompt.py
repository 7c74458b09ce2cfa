"""What the model is shown of a repository for a goal that changes it: a map (every path,
and the symbols of each Python file), the whole text of the files the goal and the last
failing test point at (with the sha256 an edit must name), and the contract for edits;
cut to size, naming what was left out. The goal points at files twice: by the names it
mentions, and by meaning (the symbols nearest to its words in the vector index)."""

from __future__ import annotations

import re
from typing import Any

from embeddings.encoder import Encoder
from kernel.codebase.impact import related
from kernel.codebase.python_facts import python_facts
from kernel.codebase.snapshot import Snapshot
from kernel.codebase.symbol_search import files_near_goal
from kernel.store.base import GraphStore

MAP_CHARS = 6000  # the repository map, at most
FILES_CHARS = 24000  # the files shown whole, together at most
FRAME = re.compile(r'(?:File "([^"]+)", line \d+)|(?:^|\s)([\w./-]+\.py):\d+', re.MULTILINE)

EDIT_CONTRACT = (
    "Answer with format 'edits' and content a JSON list of edits, one per file: "
    '{"path": P, "kind": "diff" or "replace", "before_sha256": the sha256 shown for P '
    '(null for a new file), "after_sha256": the sha256 of the whole file after the edit, '
    '"diff": a unified diff in git\'s format (--- a/P, +++ b/P, @@ hunks with context) or '
    '"content": the whole new text}. The kernel applies the edits to a copy of the '
    "repository and runs its tests there. An edit is refused, with a reason code, and "
    "none of the set applied, when its before_sha256 is not the file's, its path leaves "
    "the repository or passes through a symlink out of it, its diff names another file, "
    "does not apply, or is larger than the cap, or the result's sha256 is not "
    "after_sha256.")


def _map(snapshot: Snapshot) -> tuple[str, list[str]]:
    """One line per file (a test file marked), its symbols' signatures indented under it;
    files past the cap are named in the list of what was left out."""
    lines: list[str] = []
    left_out: list[str] = []
    used = 0
    for f in snapshot.files:
        entry = [f"{f.path}{'  (test)' if f.is_test else ''}"]
        if f.language == "python" and f.text is not None:
            entry += [f"{'        ' if s.kind == 'method' else '    '}{s.signature}"
                      for s in python_facts(f.path, f.text, f.is_test).symbols]
        size = sum(len(e) + 1 for e in entry)
        if used + size > MAP_CHARS:
            left_out.append(f"map: {f.path}")
            continue
        used += size
        lines += entry
    return "\n".join(lines), left_out


def pointed_at(snapshot: Snapshot, text: str) -> list[str]:
    """The repository's files a traceback or test report names (frames ``File "...",
    line N`` and ``path.py:N``), matched by the longest path they end with."""
    paths = {f.path for f in snapshot.files}
    found: list[str] = []
    for match in FRAME.finditer(text):
        named = (match.group(1) or match.group(2)).replace("\\", "/")
        hit = next((p for p in sorted(paths, key=len, reverse=True)
                    if named == p or named.endswith("/" + p)), None)
        if hit is not None and hit not in found:
            found.append(hit)
    return found


def repository_view(store: GraphStore, repo: str, snapshot: Snapshot, goal: str,
                    failure: str, encoder: Encoder) -> dict[str, Any]:
    """The prompt's repository section for ``goal``; ``failure`` is the last attempt's
    feedback as text (its test output names the frames)."""
    shown_map, left_out = _map(snapshot)
    by_path = {f.path: f for f in snapshot.files}
    from_goal = sorted({r["file"] for r in related(store, repo, goal)})
    near_goal = [p for p in files_near_goal(store, repo, encoder, goal)
                 if p not in from_goal and p in by_path]
    from_failure = pointed_at(snapshot, failure)
    files: dict[str, dict[str, str]] = {}
    used = 0
    for path in dict.fromkeys([*from_failure, *from_goal, *near_goal]):
        f = by_path[path]
        if f.text is None or used + len(f.text) > FILES_CHARS:
            left_out.append(f"file: {path}")
            continue
        used += len(f.text)
        files[path] = {"sha256": f.sha256, "text": f.text}
    return {"tree_hash": snapshot.tree_hash, "map": shown_map,
            "named_by_goal": from_goal, "near_goal": near_goal,
            "named_by_failing_tests": from_failure,
            "files": files, "left_out": left_out, "edit_contract": EDIT_CONTRACT}


__all__ = ["EDIT_CONTRACT", "pointed_at", "repository_view"]
