"""A person's answer to a capability request, from options or asked in the terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.prompt import Prompt

from kernel.cli.common import out
from kernel.errors import ConfigError, KernelError
from kernel.protocol import HireAnswer


def hire_answer(resolver: Path | None, add_budget: float | None, add_time: float, decline: bool,
            note: str) -> HireAnswer:
    given = [x for x in (resolver is not None, add_budget is not None or add_time > 0, decline)
             if x]
    if len(given) != 1:
        raise ConfigError("answer with exactly one of --resolver FILE, --add-budget USD "
                          "[--add-time SECONDS], --decline")
    if decline:
        return HireAnswer(kind="decline", note=note)
    if resolver is not None:
        from kernel.solve.tools import load_tool_file

        return HireAnswer(kind="resolver", tool=load_tool_file(resolver), note=note)
    if (add_budget or 0) < 0 or add_time < 0:
        raise ConfigError("--add-budget and --add-time cannot be negative")
    return HireAnswer(kind="add_budget", add_usd=add_budget or 0.0, add_seconds=add_time,
                      note=note)


def terminal_prompt(payload: dict[str, Any]) -> HireAnswer:
    """--interactive: ask in the terminal, until the answer is usable."""
    out.rule(f"HIRE: the kernel needs '{payload['capability_tag']}'")
    out.print(json.dumps({k: payload[k] for k in sorted(payload)}, indent=2))
    while True:
        choice = Prompt.ask("answer", choices=["resolver", "budget", "decline"],
                            console=out)
        try:
            if choice == "resolver":
                path = Path(Prompt.ask("tool file (YAML/JSON)", console=out))
                return hire_answer(path, None, 0.0, False, "")
            if choice == "budget":
                usd = float(Prompt.ask("dollars to add", default="1.0", console=out))
                seconds = float(Prompt.ask("seconds to add", default="0", console=out))
                return hire_answer(None, usd, seconds, False, "")
            return hire_answer(None, None, 0.0, True, Prompt.ask("why", default="", console=out))
        except (KernelError, ValueError) as exc:  # an unusable answer: ask again
            out.print(f"[red]{exc}[/red]")
