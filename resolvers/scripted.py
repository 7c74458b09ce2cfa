"""The scripted proposer: proposals from a file, so a whole run is reproducible offline.

Format (``kernel-script`` v1, YAML; see docs/scripted-proposals.md)::

    version: 1
    description: what this script drives
    proposals:
      - operation: identify_constraints   # a kernel operation
        goal: "Build a Python CLI*"       # glob on the goal summary (case-insensitive)
        output: {...}                     # the operation's output model
        cost_usd: 0.01                    # optional, default 0
        seconds: 1.5                      # optional, default 0
        repeat: false                     # optional: true = serves every later call too
    fallback:                             # optional, per operation
      classify_leaf: {output: {...}}
    intake:                               # optional: the person's answers in step 1,
      - answers: ["..."]                  # one per question put to them, in order
      - drop: ["..."]                     # (IntakeAnswer: answers, verdict, description,
                                          #  drop, edit, add, note)
    core:                                 # optional: the person's core constraints for
      - goal: "print the top 3 rows*"     # a goal typed to `kernel solve` (glob), each as
        constraints: ["logic:data:..."]   # --constraint takes it: TYPE[:DOMAIN]:TEXT

For the n-th call of an operation on a goal (n counted from the run's ledger, so a
resumed run continues where it stopped), the n-th matching entry answers, in file
order; a ``repeat`` entry keeps answering once reached. With no match left the
operation's fallback answers; with none, the run refuses (no proposals).
"""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from kernel.core.envelopes import canonical_json
from kernel.core.written_constraint import written_title
from kernel.errors import KernelError, yaml_problem
from kernel.protocol import (
    MODEL_OPERATIONS,
    Estimate,
    NoProposalError,
    Proposer,
    Resolution,
    ResolveRequest,
    coverage,
)
from kernel.protocol.errors import Parked
from kernel.protocol.intake_models import IntakeAnswer, is_intake_question
from kernel.protocol.script_models import FallbackEntry, Script, ScriptedEntry
from kernel.user_files import load_yaml, read_user_text


class ScriptError(KernelError):
    """A script file is malformed; the message names the entry."""


# Outputs whose constraints a semantic judgment in the script may name by title.
_PROPOSING = {"identify_constraints": ("constraints",),
              "detect_capability_gap": ("build_constraints",),
              "extract_goal": ("core_constraints",)}


# Where a script's answers name a constraint by id or exact title, per operation: the
# list under which each item names one (``constraint_id``).
_NAMING = {"verify_semantic": "checks", "generate_feedback": "per_constraint"}


def check_judgments(path: Path, script: Script, core_titles: set[str]) -> None:
    """Every constraint a script's answers name (a semantic judgment's check, a feedback
    entry's diagnosis, a selection's choice) is one the run can have: an id, the title of
    one the script proposes, or one of the core constraints' titles. A name that matches
    nothing would be judged "no judgment returned" (σ 0), leave a failure undiagnosed or
    drop out of the selection unseen, so it is refused here, with the titles it could
    mean."""
    known = _titles(script, core_titles)
    for where, name in _names(script):
        if not name.startswith("constraint:") and name not in known:
            raise ScriptError(f"{path}: {where}: {name!r} names no constraint of this run "
                              f"({_could_mean(name, known)})")


def _names(script: Script) -> list[tuple[str, str]]:
    """Every constraint the script's answers name, with where it is named."""
    named = []
    for where, operation, output in _answers(script):
        if operation == "select_constraints":
            named += [(f"{where}.output.constraint_ids.{number}", str(name))
                      for number, name in enumerate(output.get("constraint_ids") or [])]
        items = _NAMING.get(operation)
        if items is not None:
            named += [(f"{where}.output.{items}.{number}.constraint_id",
                       str(item.get("constraint_id")))
                      for number, item in enumerate(output.get(items) or [])]
    return named


def _titles(script: Script, core_titles: set[str]) -> set[str]:
    """The titles of the constraints a run of ``script`` can have: the core (given, or in
    the script's ``core``), those its answers propose, and those its person adds or
    rewrites during intake."""
    known = set(core_titles)
    for entry in script.proposals:
        for key in _PROPOSING.get(entry.operation, ()):
            known |= {str(c.get("title")) for c in entry.output.get(key, [])}
        for conflict in entry.output.get("conflicts", []) \
                if entry.operation == "check_global_consistency" else []:
            known |= {str(c.get("title")) for c in conflict.get("coupling_constraints", [])}
    for answer in script.intake:
        known |= {written_title(text) for text in [*answer.add, *answer.edit.values()]}
    known |= {written_title(text) for entry in script.core for text in entry.constraints}
    return known


def _answers(script: Script) -> list[tuple[str, str, dict[str, Any]]]:
    """Every answer in the script: where it is, its operation, its output."""
    return [(f"proposals.{n}", e.operation, e.output) for n, e in enumerate(script.proposals)] \
        + [(f"fallback.{op}", op, f.output) for op, f in script.fallback.items()]


def _could_mean(name: str, known: set[str]) -> str:
    """The titles a name that matches none could mean: the closest first, then the rest."""
    if not known:
        return "the run has no titled constraint; name one by its id"
    near = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.4)
    titles = ", ".join(repr(t) for t in sorted(known))
    hint = f"did you mean {' or '.join(repr(t) for t in near)}? " if near else ""
    return f"{hint}titles, exactly as written: {titles}"


def load_script(path: Path) -> Script:
    text = read_user_text(path, f"script {path}", error=ScriptError)
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise ScriptError(f"{path}: not valid YAML: {yaml_problem(exc)}") from None
    if not isinstance(data, dict):
        raise ScriptError(f"{path}: a script is a YAML mapping with 'version: 1' and a "
                          "'proposals' list (docs/scripted-proposals.md); this file holds "
                          f"{'nothing' if data is None else type(data).__name__}")
    surprise = yaml_surprise(data)
    if surprise:
        raise ScriptError(f"{path}: {surprise}")
    try:
        script = Script.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ScriptError(f"{path}: {where}: {first['msg']}") from None
    for number, entry in enumerate(script.proposals):
        _check(path, f"proposals.{number}", entry.operation, entry.output)
    for operation, fallback in script.fallback.items():
        _check(path, f"fallback.{operation}", operation, fallback.output)
    return script


def yaml_surprise(value: Any, where: str = "") -> str:
    """What YAML read differently from what a person wrote, where a key says so: ``on:``,
    ``yes:`` or ``no:`` read as a boolean, or a value in ``{...}`` cut at a comma (``title:
    under $15,000`` becomes ``under $15`` and a key ``0``). Empty when nothing is."""
    if isinstance(value, list):
        return next((found for number, item in enumerate(value)
                     if (found := yaml_surprise(item, f"{where}{number}."))), "")
    if not isinstance(value, dict):
        return ""
    previous: tuple[Any, Any] | None = None
    for key, item in value.items():
        if isinstance(key, bool):
            return (f"{where}{str(key).lower()}: YAML reads the key on, off, yes or no as "
                    f"{str(key).lower()}; quote it ('on': [...])")
        if not isinstance(key, str) and item is None and previous is not None \
                and isinstance(previous[1], str):
            return (f"{where}{previous[0]}: {previous[1]!r} is followed by a key {key!r} "
                    "with no value: inside {...} a comma ends a value, so quote the whole "
                    f"value ({previous[0]}: '{previous[1]},...')")
        found = yaml_surprise(item, f"{where}{key}.")
        if found:
            return found
        previous = (key, item)
    return ""


def _check(path: Path, where: str, operation: str, output: dict[str, Any]) -> None:
    if operation not in MODEL_OPERATIONS:
        raise ScriptError(f"{path}: {where}: unknown operation {operation!r} "
                          f"(known: {', '.join(sorted(MODEL_OPERATIONS))})")
    model = MODEL_OPERATIONS[operation].output
    try:
        model.model_validate(output)
    except ValidationError as exc:
        errors = exc.errors()
        # a field the model does not know is the likelier cause of a missing one beside it
        unknown = [e for e in errors if e["type"] == "extra_forbidden"]
        first = unknown[0] if unknown else errors[0]
        field = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"])
        if unknown and len(first["loc"]) == 1:
            known = sorted(model.model_fields)
            near = difflib.get_close_matches(str(first["loc"][0]), known, n=1, cutoff=0.5)
            missing = sorted(str(e["loc"][0]) for e in errors
                             if e["type"] == "missing" and len(e["loc"]) == 1)
            message = (f"not a field of {operation}'s output"
                       + (f" (did you mean {near[0]!r}?)" if near else "")
                       + (f"; it lacks {', '.join(missing)}" if missing else "")
                       + f"; its fields: {', '.join(known)}")
        raise ScriptError(f"{path}: {where}.output.{field}: {message}") from None


class ScriptedProposer(Proposer):
    kind = "scripted"
    prefetchable = True  # an entry depends on the request and its occurrence alone

    def __init__(self, script: Script, source: str = "scripted") -> None:
        self.script = script
        self.source = source
        self.model = source.removeprefix("scripted:")  # what a run records: the script
        # what answers: the script's content, whatever its file is called
        self._identity = "script:" + hashlib.sha256(canonical_json(
            script.model_dump(mode="json")).encode()).hexdigest()

    @property
    def identity(self) -> str:
        return self._identity

    def reuse_key(self, request: ResolveRequest, occurrence: int) -> str:
        """The request as this script would be asked it: the script's content, the
        request (whichever goal asks it) and its occurrence, which picks the entry."""
        asked = request.model_dump(mode="json", exclude={"goal_id"})
        digest = hashlib.sha256(canonical_json([asked, occurrence]).encode()).hexdigest()
        return f"{self.identity}:{digest}"

    @classmethod
    def from_file(cls, path: Path) -> ScriptedProposer:
        return cls(load_script(path), source=f"scripted:{path.name}")

    def _entry(self, request: ResolveRequest, occurrence: int) -> ScriptedEntry | FallbackEntry:
        summary = str(request.payload.get("goal_summary") or request.goal_description).lower()
        matching = [e for e in self.script.proposals if e.operation == request.operation
                    and fnmatch.fnmatchcase(summary, e.goal.lower())]
        if occurrence < len(matching):
            return matching[occurrence]
        repeating = [e for e in matching if e.repeat]
        if repeating:
            return repeating[-1]
        if request.operation in self.script.fallback:
            return self.script.fallback[request.operation]
        raise NoProposalError(
            f"the script has no proposal for {request.operation} call #{occurrence + 1} on "
            f"goal {summary!r}: {self._why_none(request.operation, len(matching))}; add an "
            f"entry or a fallback for {request.operation}",
            operation=request.operation, goal=summary)

    def _why_none(self, operation: str, matched: int) -> str:
        """Why no entry answers: the entries matching the goal are used up, or the
        operation's entries match other goals (their patterns said), or it has none."""
        if matched:
            counted = f"the {operation} entry matching it is" if matched == 1 else \
                f"the {matched} {operation} entries matching it are"
            return f"{counted} used up (give one more, or 'repeat: true' on the last)"
        patterns = sorted({e.goal for e in self.script.proposals if e.operation == operation})
        if patterns:
            shown = ", ".join(repr(p) for p in patterns[:5])
            more = f" and {len(patterns) - 5} more" if len(patterns) > 5 else ""
            return f"no {operation} entry's goal pattern matches it (they are {shown}{more})"
        return f"it has no {operation} entry at all"

    def person(self, question: dict[str, Any]) -> IntakeAnswer:
        """The scripted person: the n-th intake question gets the n-th ``intake`` answer;
        anything else (a HIRE question, a question past the list) waits for a real one."""
        number = question.get("round")
        if not is_intake_question(question) or not isinstance(number, int) or \
                number >= len(self.script.intake):
            raise Parked("the script has no answer for this question")
        return self.script.intake[number]

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        entry = self._entry(request, occurrence)
        return Estimate(cost_usd=entry.cost_usd, seconds=entry.seconds)

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        """The entry's output; a decomposition's logic constraints it names nowhere are
        left to the assembly (scripts written before parts answered for constraints)."""
        entry = self._entry(request, occurrence)
        output = entry.output
        if request.operation == "decompose":
            output = coverage.left_to_the_whole(request.constraints, output)
        return Resolution(output=output, cost_usd=entry.cost_usd, seconds=entry.seconds,
                          metadata={"source": self.source, "occurrence": occurrence})
