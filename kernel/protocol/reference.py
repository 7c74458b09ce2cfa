"""The output fields of every model operation, as Markdown, made from the models themselves.

docs/scripted-proposals.md carries this text between its ``operations`` markers, and a
test holds the two equal, so the reference a script author reads cannot drift from what
the kernel validates. ``python -m kernel.protocol.reference --write`` rewrites that part
of the doc in place (without ``--write`` it prints the text, markers included).
"""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from kernel.protocol.operations import MODEL_OPERATIONS

BEGIN, END = "<!-- operations:begin -->", "<!-- operations:end -->"
DOC = Path(__file__).resolve().parents[2] / "docs" / "scripted-proposals.md"  # in a checkout


def type_name(annotation: Any) -> str:
    """A field's type in the words a script author needs."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        return " \\| ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        named = [type_name(a) for a in args if a is not type(None)]
        return " \\| ".join(named) + (" \\| null" if type(None) in args else "")
    if origin is list:
        return f"list of {type_name(args[0])}"
    if origin is dict:
        return f"map {type_name(args[0])} → {type_name(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"`{annotation.__name__}`"
    return {str: "text", float: "number", int: "integer", bool: "true/false",
            Any: "any"}.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _nested(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _nested(a)]


_LIMITS = {"Ge": "≥", "Le": "≤", "Gt": ">", "MinLen": "at least"}
_ATTRS = {"Ge": "ge", "Le": "le", "Gt": "gt", "MinLen": "min_length"}


def _table(model: type[BaseModel]) -> list[str]:
    rows = ["| field | type | if left out | meaning |", "|---|---|---|---|"]
    for name, field in model.model_fields.items():
        if field.is_required():
            default = "required"
        else:
            value = field.get_default(call_default_factory=True)
            default = "`null`" if value is None else f"`{value!r}`" \
                if value is not PydanticUndefined else "required"
        limits = [f"{_LIMITS[type(m).__name__]} {getattr(m, _ATTRS[type(m).__name__])}"
                  for m in field.metadata if type(m).__name__ in _LIMITS]
        limits += [f"pattern {p}" for m in field.metadata
                   if (p := getattr(m, "pattern", None)) is not None]
        meaning = (field.description or "").replace("|", "\\|")
        if limits:
            meaning = (meaning + " " if meaning else "") + f"({', '.join(limits)})"
        rows.append(f"| `{name}` | {type_name(field.annotation)} | {default} | {meaning} |")
    return rows


def operations_markdown() -> str:
    """One section per model operation, then the shapes its fields use."""
    lines = [BEGIN, ""]
    shapes: dict[str, type[BaseModel]] = {}
    for name, operation in MODEL_OPERATIONS.items():
        lines += [f"#### `{name}` → `{operation.output.__name__}`", "",
                  operation.description, "", *_table(operation.output), ""]
        pending = [m for f in operation.output.model_fields.values() for m in _nested(f.annotation)]
        while pending:
            model = pending.pop(0)
            if model.__name__ not in shapes:
                shapes[model.__name__] = model
                pending += [m for f in model.model_fields.values() for m in _nested(f.annotation)]
    lines += ["#### Shapes used above", ""]
    for shape_name in sorted(shapes):
        lines += [f"`{shape_name}`", "", *_table(shapes[shape_name]), ""]
    lines.append(END)
    return "\n".join(lines)


def rewrite(doc: Path) -> None:
    """Put the generated reference into ``doc`` in place of everything from its first
    begin marker to its last end marker, so the doc holds each marker exactly once
    (pasting the printed text between the markers would leave the old end marker
    behind the new one)."""
    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{doc}: no {BEGIN} ... {END} section to rewrite")
    head, tail = text[:text.index(BEGIN)], text[text.rindex(END) + len(END):]
    doc.write_text(head + operations_markdown() + tail, encoding="utf-8")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--write"]:
        rewrite(Path(argv[1]) if len(argv) > 1 else DOC)
    else:
        print(operations_markdown())


if __name__ == "__main__":
    main(sys.argv[1:])
