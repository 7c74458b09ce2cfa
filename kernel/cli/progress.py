"""How ``kernel solve`` and ``kernel resume`` show a run while it works.

On a terminal: the goal tree, redrawn as it grows, under a status line with a spinner,
the step, the goal, the attempt and how long the current call has been out; the line
keeps moving while a sandbox or a model works, because rich redraws it on its own.
Elsewhere (a pipe, a log file, ``--json``): one line per moment on stderr, as text or
as JSON lines (``--progress json``), so stdout stays the command's result.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any, Literal

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from kernel import api
from kernel.cli.common import out
from kernel.cli.shown import shown
from kernel.cli.tree import render_tree
from kernel.errors import ConfigError
from kernel.runtime.progress import CALLS, Event, watching
from kernel.store.base import GraphStore

Mode = Literal["auto", "live", "plain", "json", "none"]
PROGRESS_HELP = ("auto (a live view on a terminal, lines on stderr elsewhere) | live | "
                 "plain | json (JSON lines on stderr) | none")
MODES = ("auto", "live", "plain", "json", "none")


def _describe(event: Event) -> str:
    if event.kind == "call":
        return CALLS.get(event.text, f"asking for {event.text}")
    if event.kind == "reused":
        return event.text
    return event.text.replace("_", " ")


class _Status:
    """The lines under the tree: read on every redraw, so their clocks keep running. The
    first is the step being taken; below it, with ``--concurrency`` above 1, one line per
    other goal whose call is out (calls end on other threads, hence the lock)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.spinner = Spinner("dots")
        self.step: Event | None = None
        self.call: Event | None = None
        self.phase = "starting"
        self.lock = threading.Lock()
        self.out: dict[tuple[str | None, str], Event] = {}  # calls in flight, by goal and call

    def went_out(self, event: Event) -> None:
        with self.lock:
            self.out[(event.goal_id, event.text)] = event

    def came_back(self, event: Event) -> None:
        with self.lock:
            self.out.pop((event.goal_id, event.text), None)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        now = time.monotonic()
        parts = [self.phase] if self.step is None else [self.step.text.replace("_", " ")]
        if self.step is not None and self.step.goal:
            parts.append(f"'{shown(self.step.goal[:40])}'")
        if self.step is not None and self.step.attempt:
            parts.append(f"attempt {self.step.attempt}")
        if self.call is not None:
            parts.append(f"{_describe(self.call)} {now - self.call.at:.1f}s")
        parts.append(f"run {now - self.started:.0f}s")
        self.spinner.text = Text(" · ".join(parts))
        yield self.spinner
        with self.lock:
            others = [e for e in self.out.values()
                      if self.step is None or e.goal_id != self.step.goal_id]
        for event in sorted(others, key=lambda e: e.at):
            whose = shown(f"'{event.goal[:40]}'" if event.goal else event.goal_id)
            yield Text(f"  also out: {_describe(event)} for {whose} "
                       f"{now - event.at:.1f}s", style="dim")


class LiveView:
    """The terminal view: the tree (once the run exists) and the status line."""

    def __init__(self, store: GraphStore, run_id: str | None = None) -> None:
        self.store = store
        self.run_id = run_id
        self.status = _Status()
        self.last = 0.0
        self.live = Live(self._render(), console=out, refresh_per_second=8, transient=False)
        self.live.start()

    def started(self, kernel: Any, root_id: str) -> None:
        self.run_id = kernel.run.run_id
        self.live.update(self._render())

    def __call__(self, event: Event) -> None:
        if event.kind == "phase":
            self.status.phase = event.text
        elif event.kind == "step":
            self.status.step, self.status.call = event, None
        elif event.kind == "done":  # from the thread that ran the call
            self.status.came_back(event)
        elif event.kind == "reused":  # nothing went out: served from an earlier answer
            self.status.call = None
        else:  # a call is where the time goes: show the tree as it stands before it
            self.status.went_out(event)
            if self.status.step is not None and event.goal_id != self.status.step.goal_id:
                return  # another goal's call, started ahead of its turn
            self.status.call = event
            self.last = time.monotonic()
            self.live.update(self._render())

    def step(self, goal_id: str) -> None:
        if time.monotonic() - self.last > 0.25:
            self.last = time.monotonic()
            self.live.update(self._render())

    def _render(self) -> Group:
        if self.run_id is None:
            return Group(self.status)
        return Group(render_tree(api.run_tree(self.store, self.run_id), self.run_id),
                     self.status)

    def pause(self) -> None:
        self.live.stop()

    def resume(self) -> None:
        self.live.start()

    def stop(self) -> None:
        if self.run_id is not None:
            self.live.update(render_tree(api.run_tree(self.store, self.run_id), self.run_id))
        self.live.stop()
        out.print()


class LineView:
    """One line per moment on stderr, as text or JSON lines."""

    def __init__(self, as_json: bool, stream: IO[str] | None = None) -> None:
        self.as_json = as_json
        self.stream = stream or sys.stderr
        self.began = time.monotonic()
        self.lock = threading.Lock()  # a call ends on the thread that ran it

    def __call__(self, event: Event) -> None:
        elapsed = round(event.at - self.began, 3)
        if self.as_json:
            fields = {"elapsed_seconds": elapsed, "kind": event.kind, "what": event.text,
                      "goal_id": event.goal_id, "goal": event.goal, "attempt": event.attempt}
            if event.took is not None:
                fields["took_seconds"] = round(event.took, 3)
            if event.cost_usd is not None:
                fields["cost_usd"] = round(event.cost_usd, 6)
            line = json.dumps(fields)  # \u escapes: nothing raw reaches a terminal
        else:
            where = f" · '{event.goal[:60]}'" if event.goal else ""
            if not event.goal and event.goal_id and event.kind in ("call", "done"):
                where = f" · {event.goal_id}"
            attempt = f" · attempt {event.attempt}" if event.attempt else ""
            took = f" · {event.took:.1f}s" if event.took is not None else ""
            if event.cost_usd is not None:
                took += f" · ${event.cost_usd:.4f}"
            line = f"[{elapsed:7.1f}s] {event.kind} {_describe(event)}{where}{attempt}{took}"
        with self.lock:
            print(shown(line), file=self.stream, flush=True)

    def started(self, kernel: Any, root_id: str) -> None:
        self(Event("phase", f"run {kernel.run.run_id} started"))

    def step(self, goal_id: str) -> None:
        """Steps are reported as they begin; nothing to add when one ends."""

    def pause(self) -> None:
        """Nothing to pause: lines do not redraw."""

    def resume(self) -> None:
        """Nothing to resume."""

    def stop(self) -> None:
        """Every line is already written."""


def check_mode(mode: str) -> str:
    """``mode`` if ``--progress`` knows it; otherwise the one-line error naming those it does."""
    if mode not in MODES:
        raise ConfigError(f"--progress must be one of {', '.join(MODES)}")
    return mode


@contextlib.contextmanager
def showing(view: LiveView | LineView | None) -> Iterator[LiveView | LineView | None]:
    """Send the run's progress to ``view`` for the block, and close the view after it."""
    try:
        with watching(view):
            yield view
    finally:
        if view is not None:
            view.stop()


def make_view(mode: str, store: GraphStore, as_json: bool,
              run_id: str | None = None) -> LiveView | LineView | None:
    """The view ``--progress`` asks for; ``auto`` is the live view on a terminal (unless
    stdout carries ``--json``) and text lines on stderr elsewhere."""
    if mode == "auto":
        mode = "live" if out.is_terminal and not as_json else "plain"
    if mode == "live" and as_json:
        mode = "plain"  # the live view would mix with the JSON on stdout
    if mode == "none":
        return None
    if mode == "live":
        return LiveView(store, run_id)
    return LineView(as_json=mode == "json")
