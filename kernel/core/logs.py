"""The tiered log: tier 1 human-readable flow, tier 2 decision records, tier 3 I/O metadata.

A line is stored with the run's next commit that can carry it (or when the run stops), not
in a statement of its own: logs are observations, and a crash loses at most the lines
written since the last commit.

Raw prompts and outputs are kept only when ``raw_io`` is on; secrets are never
written: keys that name credentials are masked, and values that look like API keys or
bearer tokens are masked wherever they appear.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kernel.core.ids import derived_ulid
from kernel.core.run import Run, wall_clock_iso

REDACTED = "[redacted]"
# "token" only as the end of a name (access_token, token), not token counts (tokens).
_SECRET_KEY = re.compile(r"(?i)(api[_-]?key|secret|password|passwd|authorization|credential|"
                         r"cookie|(^|[_-])token$)")
_SECRET_VALUE = re.compile(r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-[A-Za-z0-9]{16,}|"
                           r"(?i:bearer)\s+[A-Za-z0-9._\-]{8,}|gh[pousr]_[A-Za-z0-9]{20,}|"
                           r"AKIA[0-9A-Z]{16})")
RAW_KEYS = frozenset({"prompt", "raw_prompt", "output", "raw_output", "messages", "response"})


def redact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: REDACTED if _SECRET_KEY.search(str(k)) else redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    if isinstance(value, str):
        return _SECRET_VALUE.sub(REDACTED, value)
    return value


class TieredLog:
    def __init__(self, run: Run, raw_io: bool = False) -> None:
        self.run = run
        self.raw_io = raw_io
        self._n = 0

    def flow(self, goal_id: str | None, summary: str) -> str:
        return self._write(1, "flow", goal_id, summary, None)

    def decision(self, goal_id: str | None, decision: str, *, candidates: list[Any],
                 chosen: Any, rationale: str, **extra: Any) -> str:
        detail = {"decision": decision, "candidates": candidates, "chosen": chosen,
                  "rationale": rationale, **extra}
        return self._write(2, "decision", goal_id, f"{decision}: {chosen}", detail)

    def io(self, goal_id: str | None, resolver_id: str, operation: str,
           metadata: dict[str, Any]) -> str:
        detail = {"resolver_id": resolver_id, "operation": operation, **metadata}
        if not self.raw_io:
            detail = {k: v for k, v in detail.items() if k not in RAW_KEYS}
            detail["raw_io_policy"] = "redacted_by_default"
        return self._write(3, "io", goal_id, f"{operation} via {resolver_id}", detail)

    def _write(self, tier: int, category: str, goal_id: str | None, summary: str,
               detail: dict[str, Any] | None) -> str:
        self._n += 1
        log_id = "log:" + str(derived_ulid(self.run.base_ms, self.run.seq, self.run.run_id, "log",
                                           str(self._n), summary))
        props = {"id": log_id, "run_id": self.run.run_id, "goal_id": goal_id, "tier": tier,
                 "category": category, "summary": redact(summary),
                 "caption": redact(summary)[:80], "seq": self.run.seq,
                 "n": self._n, "wall_time": wall_clock_iso(),
                 "detail": json.dumps(redact(detail), sort_keys=True) if detail else None}
        self.run.step.pending_logs.append({"id": log_id, "goal_id": goal_id,
                                      "props": {k: v for k, v in props.items() if v is not None}})
        return log_id

    def entries(self, max_tier: int = 3) -> list[dict[str, Any]]:
        self.run.flush()
        return self.run.store.run("log/of_run", {"run_id": self.run.run_id, "max_tier": max_tier})
