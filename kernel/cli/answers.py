"""A person's answer to a capability request, from options or asked in the terminal."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.prompt import Prompt

from kernel.cli.common import amount, out
from kernel.cli.intake_dialog import ask_in_terminal
from kernel.errors import ConfigError, KernelError, yaml_problem
from kernel.protocol import HireAnswer
from kernel.protocol.intake_models import IntakeAnswer, is_intake_question


def hire_answer(resolver: Path | None, add_budget: float | None, add_time: float, decline: bool,
            note: str, intake: Path | None = None) -> HireAnswer | IntakeAnswer:
    given = [x for x in (resolver is not None, add_budget is not None or add_time > 0, decline,
                         intake is not None) if x]
    if len(given) != 1:
        raise ConfigError("answer with exactly one of --resolver FILE, --add-budget USD "
                          "[--add-time SECONDS], --decline, --intake FILE")
    if intake is not None:
        return intake_answer(intake)
    if decline:
        return HireAnswer(kind="decline", note=note)
    if resolver is not None:
        from kernel.solve.tools import load_tool_file

        return HireAnswer(kind="resolver", tool=load_tool_file(resolver), note=note)
    amount(add_budget or 0.0, "--add-budget", zero=True)
    amount(add_time, "--add-time", zero=True)
    return HireAnswer(kind="add_budget", add_usd=add_budget or 0.0, add_seconds=add_time,
                      note=note)


def intake_answer(path: Path) -> IntakeAnswer:
    """``--intake FILE``: a YAML (or JSON) intake answer, checked before it is stored."""
    import yaml
    from pydantic import ValidationError

    from kernel.user_files import load_yaml, read_user_text

    text = read_user_text(path, f"--intake {path}")
    try:
        data = load_yaml(text)
        return IntakeAnswer.model_validate(data if data is not None else {})
    except yaml.YAMLError as exc:
        raise ConfigError(f"--intake {path}: not valid YAML: {yaml_problem(exc)}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the answer"
        raise ConfigError(f"--intake {path}: {where}: {first['msg']} (fields: answers, "
                          "verdict, description, drop, edit, add, note)") from None


def terminal_prompt(payload: dict[str, Any]) -> HireAnswer | IntakeAnswer:
    """--interactive: ask in the terminal, until the answer is usable."""
    if is_intake_question(payload):
        return ask_in_terminal(payload)
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
