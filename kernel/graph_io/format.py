"""The graph file format (``kernel-graph`` v2): JSON Lines, one element per line.

A file is a header line, node lines sorted by (label, id), relationship lines
sorted by (source label, source id, type, target label, target id, key), blob
lines (the artifacts' contents, once per sha256, sorted by it), then a footer with
the counts, so a truncated file is detected. Version 1 files (no blobs, no schema
in the header) are still read. See docs/graph-format.md.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from kernel.core.artifacts import is_sha256
from kernel.store.ontology import EXPORTED_LABELS, REL_TYPE_NAMES

FORMAT: Final = "kernel-graph"
FORMAT_VERSION: Final = 2
READABLE_VERSIONS: Final = (1, 2)

Scalar = StrictBool | StrictInt | StrictFloat | StrictStr
Value = Scalar | list[Scalar]


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


_PROPERTY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCALARS = frozenset({bool, int, float, str})
_NAMES_SEEN: set[str] = set()  # names already checked (a graph uses a few dozen)


def _check_props(props: dict[str, Any]) -> dict[str, Any]:
    if "id" in props:
        raise ValueError("'id' belongs in the line's id/key field, not in props")
    for name, value in props.items():
        if name not in _NAMES_SEEN:
            if not isinstance(name, str) or not _PROPERTY_NAME.fullmatch(name):
                raise ValueError(f"property name {name!r} must be letters, digits and "
                                 "underscores")
            if len(_NAMES_SEEN) < 10_000:
                _NAMES_SEEN.add(name)
        kind = type(value)
        if kind is int or kind is bool or (kind is str and value.isascii()
                                           and "\x00" not in value):
            continue  # the common values, settled without a call
        if kind is list:
            kinds = {type(v) for v in value}
            if len(kinds) > 1 and not kinds <= {int, float}:
                raise ValueError(f"property {name!r}: a list must hold values of one type")
            for item in value:
                _check_scalar(name, item)
        else:
            _check_scalar(name, value)
    return props


def _check_scalar(name: str, item: Any) -> None:
    """The model's rule (a boolean, number or string) for the exporter, which builds no
    model, and the store's limits for both."""
    kind = type(item)
    if kind not in _SCALARS:
        raise ValueError(f"property {name!r}: {item!r} is not a boolean, number or string "
                         "(or a list of them)")
    if kind is str:
        if "\x00" in item:
            raise ValueError(f"property {name!r}: strings may not contain NUL (\\u0000)")
        if not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"property {name!r}: not valid Unicode text "
                                 "(a lone surrogate)") from None
    elif kind is float and not math.isfinite(item):
        raise ValueError(f"property {name!r}: {item} is not a finite number")


def _known_label(label: str) -> str:
    if label not in EXPORTED_LABELS:
        raise ValueError(
            f"label {label!r} is not part of the kernel ontology "
            f"(known: {', '.join(EXPORTED_LABELS)})"
        )
    return label


class HeaderLine(_Line):
    """Version 2 adds the source's schema version and whether contents travel."""

    kind: Literal["header"]
    format: Literal["kernel-graph"]
    version: Literal[1, 2]
    kernel: StrictStr = ""
    schema_version: StrictInt | None = Field(default=None, alias="schema", ge=0)
    contents: StrictBool | None = None

    @model_validator(mode="after")
    def _fields_of_the_version(self) -> HeaderLine:
        if self.version == 1 and (self.schema_version is not None or self.contents is not None):
            raise ValueError("a version 1 header has no 'schema' or 'contents' field")
        if self.version == 2 and (self.schema_version is None or self.contents is None):
            raise ValueError("a version 2 header needs 'schema' (an integer) and 'contents' "
                             "(true or false)")
        return self

    @property
    def source_schema(self) -> int:
        """Schema version of the exporting deployment; v1 files predate any later one."""
        return 1 if self.schema_version is None else self.schema_version


class NodeLine(_Line):
    kind: Literal["node"]
    label: StrictStr
    id: StrictStr = Field(min_length=1)
    props: dict[str, Value] = Field(default_factory=dict)

    @field_validator("label")
    @classmethod
    def _known_label(cls, label: str) -> str:
        return _known_label(label)

    @field_validator("props")
    @classmethod
    def _valid_props(cls, props: dict[str, Any]) -> dict[str, Any]:
        return _check_props(props)


class Endpoint(_Line):
    label: StrictStr
    id: StrictStr = Field(min_length=1)

    @field_validator("label")
    @classmethod
    def _known_label(cls, label: str) -> str:
        return _known_label(label)


class RelLine(_Line):
    kind: Literal["rel"]
    type: StrictStr
    from_: Endpoint = Field(alias="from")
    to: Endpoint
    key: StrictStr | None = None
    props: dict[str, Value] = Field(default_factory=dict)

    @field_validator("type")
    @classmethod
    def _known_type(cls, rel_type: str) -> str:
        if rel_type not in REL_TYPE_NAMES:
            raise ValueError(f"relationship type {rel_type!r} is not part of the kernel ontology")
        return rel_type

    @field_validator("props")
    @classmethod
    def _valid_props(cls, props: dict[str, Any]) -> dict[str, Any]:
        return _check_props(props)

    def sort_key(self) -> tuple[str, str, str, str, str, str]:
        return (self.from_.label, self.from_.id, self.type, self.to.label, self.to.id,
                self.key or "\uffff")




class BlobLine(_Line):
    """An artifact's bytes, base64 in ``data``; checked against ``sha256`` and ``size``."""

    kind: Literal["blob"]
    sha256: StrictStr
    size: StrictInt = Field(ge=0)
    data: StrictStr

    @model_validator(mode="after")
    def _content_matches(self) -> BlobLine:
        if not is_sha256(self.sha256):
            raise ValueError("sha256 must be 64 lowercase hex digits")
        content = self.content()
        if len(content) != self.size:
            raise ValueError(f"blob {self.sha256[:12]}: data holds {len(content)} bytes, "
                             f"size says {self.size}")
        if hashlib.sha256(content).hexdigest() != self.sha256:
            raise ValueError(f"blob {self.sha256[:12]}: data does not hash to its sha256 "
                             "(the file was altered or damaged)")
        return self

    def content(self) -> bytes:
        try:
            return base64.b64decode(self.data, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError(f"blob {self.sha256[:12]}: data is not base64") from None

    @classmethod
    def of(cls, content: bytes) -> BlobLine:
        """The line for bytes just read from the blob store (which checked their hash)."""
        return cls.model_construct(kind="blob", sha256=hashlib.sha256(content).hexdigest(),
                                   size=len(content),
                                   data=base64.b64encode(content).decode("ascii"))


class FooterLine(_Line):
    kind: Literal["footer"]
    nodes: StrictInt = Field(ge=0)
    relationships: StrictInt = Field(ge=0)
    blobs: StrictInt | None = Field(default=None, ge=0)


Line = Annotated[HeaderLine | NodeLine | RelLine | BlobLine | FooterLine,
                 Field(discriminator="kind")]
# Keys only in pydantic's string cache: string values would fill it from every file read.
_LINE = TypeAdapter(Line, config=ConfigDict(cache_strings="keys"))
AnyLine = HeaderLine | NodeLine | RelLine | BlobLine | FooterLine


def parse_line(text: str) -> AnyLine:
    """Parse one line; raises ``ValueError`` with a short reason.

    pydantic reads the JSON itself (the fast path, a third faster on an import); a line
    it refuses is read again step by step, which names the reason."""
    try:
        line: AnyLine = _LINE.validate_json(text)
        return line
    except ValidationError:
        pass
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError("each line must be a JSON object")
    try:
        return _LINE.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{where}: {first['msg']}" if where else first["msg"]) from None


def dump_line(line: _Line) -> str:
    """Canonical text of a line: sorted keys, no spaces, so exports are byte-identical."""
    data = line.model_dump(by_alias=True, exclude_none=True)
    return _canonical(data)


def _canonical(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def node_text(label: str, ident: str, props: dict[str, Any]) -> str:
    """``dump_line(NodeLine(...))`` without building the model, for the exporter's hot
    loop: the same checks (label, id, props), the same canonical text."""
    if not ident or not isinstance(ident, str):
        raise ValueError(f"{label} node: its id must be a non-empty string, not {ident!r}")
    return _canonical({"kind": "node", "label": _known_label(label), "id": ident,
                       "props": _check_props(props)})


def rel_text(rel_type: str, from_: tuple[str, str], to: tuple[str, str], key: str | None,
             props: dict[str, Any]) -> str:
    """``dump_line(RelLine(...))`` without building the model (see :func:`node_text`)."""
    if rel_type not in REL_TYPE_NAMES:
        raise ValueError(f"relationship type {rel_type!r} is not part of the kernel ontology")
    ends = []
    for label, ident in (from_, to):
        if not ident or not isinstance(ident, str):
            raise ValueError(f"{rel_type} relationship: an endpoint id must be a non-empty "
                             f"string, not {ident!r}")
        ends.append({"label": _known_label(label), "id": ident})
    data: dict[str, Any] = {"kind": "rel", "type": rel_type, "from": ends[0], "to": ends[1],
                            "props": _check_props(props)}
    if key is not None:
        if not isinstance(key, str):
            raise ValueError(f"{rel_type} relationship: its key must be a string, not {key!r}")
        data["key"] = key
    return _canonical(data)
