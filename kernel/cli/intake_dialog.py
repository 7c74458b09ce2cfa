"""Step 1 in the terminal: the person answers the intake's questions and confirms, edits
or rejects each constraint the extraction proposes."""

from __future__ import annotations

from typing import Any

from rich.prompt import Prompt

from kernel.cli.common import out
from kernel.cli.shown import escape
from kernel.protocol.intake_models import IntakeAnswer
from kernel.solve.constraint_text import CONSTRAINT_HELP


def ask_in_terminal(payload: dict[str, Any]) -> IntakeAnswer:
    """One intake question, asked until the answer is usable."""
    if payload["kind"] == "clarify":
        out.rule(escape(f"intake: a few questions about '{payload['summary']}'"))
        answers = [Prompt.ask(f"[bold]{escape(q)}[/bold]", console=out)
                   for q in payload["questions"]]
        return IntakeAnswer(answers=answers)
    return _review(payload)


def _review(payload: dict[str, Any]) -> IntakeAnswer:
    out.rule(f"intake: the goal as understood ({payload['intent_class']}, "
             f"clarity {payload['clarity']:.2f})")
    out.print(escape(payload["description"]), highlight=False)
    for note in payload["notes"]:
        out.print(f"[yellow]kernel:[/] {escape(note)}", highlight=False)
    if payload["unstated"]:
        out.print(escape("unstated: " + "; ".join(payload["unstated"])), highlight=False)
    if Prompt.ask("the goal", choices=["confirm", "edit", "reject"], default="confirm",
                  console=out) == "reject":
        return IntakeAnswer(verdict="reject", note=Prompt.ask("why", default="", console=out))
    description = None
    drop: list[str] = []
    edit: dict[str, str] = {}
    if Prompt.ask("edit the description?", choices=["y", "n"], default="n", console=out) == "y":
        description = Prompt.ask("the goal, in your words", console=out)
    for c in payload["constraints"]:
        shown = escape(f"[{c['type']}/{c['domain']}] {c['title']}")
        choice = Prompt.ask(f"core constraint {shown}", choices=["confirm", "edit", "reject"],
                            default="confirm", console=out)
        if choice == "reject":
            drop.append(c["title"])
        elif choice == "edit":
            edit[c["title"]] = Prompt.ask(escape(f"as {CONSTRAINT_HELP}"), console=out)
    add = []
    while True:
        more = Prompt.ask("add a core constraint (empty: none)", default="", console=out)
        if not more:
            break
        add.append(more)
    return IntakeAnswer(description=description, drop=drop, edit=edit, add=add)
