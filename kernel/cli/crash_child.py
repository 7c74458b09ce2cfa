"""The ``kernel`` command with a kill -9 armed at one store statement (for the crash check).

Environment: ``KERNEL_CRASH_ULID`` pins the run id (so a crashed run can be compared with
an uninterrupted one), ``KERNEL_CRASH_AT`` is the statement number at which the process
kills itself (0: never), ``KERNEL_CRASH_WHEN`` is ``before`` (the statement is never
sent) or ``after`` (it was applied, the reply is lost), ``KERNEL_CRASH_ON`` counts only the
statements of that name (``ledger/append``, say), and ``KERNEL_CRASH_COUNT`` names
a file that receives the number of statements a run that was not killed made.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from pathlib import Path
from typing import Any

from ulid import ULID


def _arm() -> None:
    import kernel.core.ids as ids_module
    from kernel.store.base import GraphStore

    pinned = os.environ.get("KERNEL_CRASH_ULID")
    if pinned:
        ids_module.new_run_ulid = lambda: ULID.from_str(pinned)
    kill_at = int(os.environ.get("KERNEL_CRASH_AT", "0"))
    before = os.environ.get("KERNEL_CRASH_WHEN", "after") == "before"
    only = os.environ.get("KERNEL_CRASH_ON", "")
    original = GraphStore.run
    calls = [0]

    def run(self: GraphStore, name: str, params: Any = None, identifiers: Any = None) -> Any:
        if only and name != only:
            return original(self, name, params, identifiers)
        calls[0] += 1
        if calls[0] == kill_at and before:
            os.kill(os.getpid(), signal.SIGKILL)
        rows = original(self, name, params, identifiers)
        if calls[0] == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return rows

    GraphStore.run = run  # type: ignore[method-assign]
    count_file = os.environ.get("KERNEL_CRASH_COUNT")
    if count_file:
        atexit.register(lambda: Path(count_file).write_text(str(calls[0])))


def main() -> None:
    _arm()
    from kernel.cli.app import main as kernel_main

    sys.argv = ["kernel", *sys.argv[1:]]
    kernel_main()


if __name__ == "__main__":
    main()
