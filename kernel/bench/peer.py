"""The peer a kernel step is compared with: a LangGraph-style durable checkpoint step.

Each step reads the thread's latest checkpoint, builds the next one (the state with one
goal's record changed, as a graph step changes one goal) and commits it with the step's
pending writes in one SQLite transaction: a file database in WAL mode with
``synchronous=FULL``, so every step is durable on return, as a kernel step is.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

_SCHEMA = """
CREATE TABLE checkpoints (thread_id TEXT, checkpoint_id INTEGER, parent_id INTEGER,
                          checkpoint BLOB, PRIMARY KEY (thread_id, checkpoint_id));
CREATE TABLE writes (thread_id TEXT, checkpoint_id INTEGER, task_id TEXT, idx INTEGER,
                     channel TEXT, value BLOB,
                     PRIMARY KEY (thread_id, checkpoint_id, task_id, idx));
"""


def durable_checkpoint_step_ms(goals: int, steps: int, directory: Path | None = None) -> float:
    """Median milliseconds of one durable checkpointed step over a state of ``goals``, its
    database in ``directory`` (the store's data directory: the same disk, the same fsync)."""
    state = {f"node:{i}": {"status": "pending", "attempts": 0, "spent": 0}
             for i in range(goals)}
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        db = sqlite3.connect(Path(tmp) / "checkpoints.sqlite", isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
            db.execute("INSERT INTO checkpoints VALUES ('t', 0, NULL, ?)",
                       (json.dumps(state).encode(),))
            samples = [_step(db, i, goals) for i in range(1, steps + 1)]
        finally:
            db.close()
    return statistics.median(samples)


def _step(db: sqlite3.Connection, n: int, goals: int) -> float:
    started = time.perf_counter()
    row = db.execute("SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = 't' "
                     "ORDER BY checkpoint_id DESC LIMIT 1").fetchone()
    state = json.loads(row[1])
    goal = state[f"node:{n % goals}"]
    goal.update(status="resolved", attempts=goal["attempts"] + 1, spent=goal["spent"] + 1)
    db.execute("BEGIN")
    db.execute("INSERT INTO writes VALUES ('t', ?, ?, 0, 'goal', ?)",
               (row[0], f"task-{n}", json.dumps(goal).encode()))
    db.execute("INSERT INTO checkpoints VALUES ('t', ?, ?, ?)",
               (row[0] + 1, row[0], json.dumps(state).encode()))
    db.execute("COMMIT")
    return (time.perf_counter() - started) * 1000
