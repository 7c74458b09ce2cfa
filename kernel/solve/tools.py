"""Tools the system grows (BUILD) or is given (HIRE), and how the kernel runs them.

A *script tool* is a Python module with ``run(request: dict) -> dict``; it must pass the
static check before it is registered, and it runs in the sandbox through a harness the
kernel owns, so the tool itself never needs stdin, files or the network. A *composite*
is a fixed chain of registered script tools, each fed the previous one's result. What a
tool returns is an untrusted proposal like any other: recorded in the ledger first.
"""

from __future__ import annotations

import ast
import json
import time
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from kernel.core.artifacts import Artifacts
from kernel.core.envelopes import Lineage
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.registry import Registry
from kernel.core.run import Run
from kernel.errors import KernelError, yaml_problem
from kernel.protocol import Estimate, Proposer, Resolution, ResolveRequest, ToolDefinition
from kernel.protocol.solve_models import ResolutionOutput
from kernel.repositories import tools as tool_library
from kernel.runtime.installed import resolvers
from kernel.solve.sandbox_runs import SandboxSite, deadline
from kernel.user_files import load_yaml, read_user_text

HARNESS = Path(__file__).with_name("tool_harness.py")


class ToolDefinitionError(KernelError):
    """A tool cannot be registered as given; the message says what to change."""


class ToolShelf(Protocol):
    """Where a tool is registered (the run's context has it all): the registry its steps
    are checked against, the artifacts its code is stored as, and the run whose commit
    registers it."""

    @property
    def run(self) -> Run: ...

    @property
    def registry(self) -> Registry: ...

    @property
    def artifacts(self) -> Artifacts: ...


class ToolSite(ToolShelf, SandboxSite, Protocol):
    """Where a registered tool runs: the shelf it is read from (its row, and its code as
    an artifact, the request's inputs too) and the sandbox site its workspace is laid out
    from."""


def load_tool_file(path: Path) -> ToolDefinition:
    """A tool file (YAML or JSON): the definition's fields, with ``script: FILE`` (relative
    to the tool file) instead of inline ``code`` if you like."""
    import yaml

    text = read_user_text(path, f"tool file {path}", error=ToolDefinitionError)
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise ToolDefinitionError(
            f"{path}: cannot read it as YAML or JSON: {yaml_problem(exc)}") from exc
    if not isinstance(data, dict):
        raise ToolDefinitionError(f"{path}: expected a mapping of tool fields")
    script = data.pop("script", None)
    if script is not None:
        data["code"] = read_user_text(path.parent / str(script), f"{path}: script {script!r}",
                                      error=ToolDefinitionError)
    try:
        tool = ToolDefinition.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the tool"
        raise ToolDefinitionError(f"{path}: {where}: {first['msg']}") from exc
    if tool.code is not None and code_problems(tool.code):
        raise ToolDefinitionError(f"{path}: the code would not pass the kernel's check: "
                                  + "; ".join(code_problems(tool.code)))
    return tool


def code_problems(code: str) -> list[str]:
    """Why the kernel would not run this code as a tool (empty: it may)."""
    problems = resolvers().sandbox.code_problems(code)
    if not problems:
        tree = ast.parse(code)
        if not any(isinstance(n, ast.FunctionDef) and n.name == "run" for n in tree.body):
            problems.append("the module defines no top-level run(request) function")
    return problems


def check_definition(registry: Registry, tool: ToolDefinition) -> None:
    """Raise with every reason the tool cannot be registered."""
    problems = definition_problems(registry, tool)
    if problems:
        raise ToolDefinitionError("; ".join(problems))


def definition_problems(registry: Registry, tool: ToolDefinition) -> list[str]:
    """Every reason the tool cannot be registered (empty: it can): its code fails the
    static check, or a step is not a registered script tool."""
    problems = code_problems(tool.code) if tool.code is not None else []
    for step in tool.steps:
        if registry.find(step) is None:
            problems.append(f"step {step} is not a registered resolver")
        elif registry.kind(step) != "script":
            problems.append(f"step {step} is not a script tool (a composite chains script tools)")
    return problems


def register(shelf: ToolShelf, tool: ToolDefinition, *, resolver_id: str, goal: GoalNode,
             builder_id: str, lineage_inputs: list[str], replaces: list[str],
             goal_changes: GoalChanges, request_id: str | None = None,
             key: str) -> str:
    """Register the tool, its edges and the adopting goal's changes in one commit.

    The code is stored as an artifact first (idempotent by ``key``), so a crash between
    the two writes registers the same tool on resume."""
    check_definition(shelf.registry, tool)
    metadata: dict[str, Any] = {"kind": tool.kind, "built_for_node_id": goal.id}
    if tool.code is not None:
        artifact = shelf.artifacts.register(
            goal.id, tool.code, type="tool_code", format="python",
            lineage=Lineage(node_id=goal.id, resolver_id=builder_id,
                            input_artifact_ids=lineage_inputs), key=f"tool:{key}")
        metadata["artifact_id"] = artifact.id
    else:
        metadata["steps"] = list(tool.steps)
    props = {
        "name": resolver_id.removeprefix("resolver:"), "caption": tool.label,
        "label": tool.label, "description": tool.description, "type": tool.type,
        "capabilities": sorted(set(tool.capabilities)),
        "cost_per_invocation": tool.cost_per_invocation, "cost_per_token": 0.0,
        "latency_estimate": tool.latency_estimate, "input_types": ["text", "code"],
        "output_types": ["text", "code"],
        "built_by": "human" if builder_id.startswith("actor:") else "system",
        "built_for_node_id": goal.id, "metadata": json.dumps(metadata, sort_keys=True),
        "registered_seq": shelf.run.seq,
    }
    tool_library.register(shelf.run, {
        "id": resolver_id, "props": props, "capabilities": sorted(set(tool.capabilities)),
        "builder_id": builder_id, "artifact_id": metadata.get("artifact_id"),
        "parts": [{"id": s, "order": i, "role": f"step {i + 1}"}
                  for i, s in enumerate(tool.steps)],
        "replaces": sorted(set(replaces) - {resolver_id}),
        "goal_id": goal.id, "status": goal.status.value,
        "changes": goal_changes.to_properties(), "request_id": request_id,
    }, what=f"register {resolver_id} for {goal.id}")
    return resolver_id


class ToolRunner(Proposer):
    """Runs a registered script or composite tool in a fresh sandbox workspace."""

    def __init__(self, site: ToolSite, resolver: dict[str, Any]) -> None:
        self.site = site
        self.resolver = resolver
        self.source = resolver["id"]
        self.metadata = json.loads(resolver.get("metadata") or "{}")

    def estimate(self, request: ResolveRequest, occurrence: int) -> Estimate:
        return Estimate(cost_usd=float(self.resolver.get("cost_per_invocation") or 0.0),
                        seconds=float(self.resolver.get("latency_estimate") or 5.0))

    def propose(self, request: ResolveRequest, occurrence: int) -> Resolution:
        start = time.perf_counter()
        modules = self._modules()
        files = {f"{name}.py": code for name, code in modules}
        files["_harness.py"] = HARNESS.read_text()
        files["request.json"] = json.dumps({
            "steps": [name for name, _ in modules], "request": self._payload(request)},
            sort_keys=True)
        site, run = self.site, self.site.run
        name = f"{run.run_id.removeprefix('run:')}-tool-{run.proposals:05d}"
        tools = resolvers().sandbox.workspace(site.workspace_root / name, site.policy,
                                              deadline(site), None, None)
        ran = tools.resolve(ResolveRequest(operation="run_tool", goal_id=request.goal_id,
                                           payload={"files": files,
                                                    "commands": [["python3", "_harness.py"]]}))
        result = ran.output["results"][0] if ran.output["results"] else {}
        output = _parse(result)
        return Resolution(output=output.model_dump(mode="json"),
                          cost_usd=float(self.resolver.get("cost_per_invocation") or 0.0),
                          seconds=time.perf_counter() - start,
                          metadata={"tool": self.source, "exit_code": result.get("exit_code")})

    def _modules(self) -> list[tuple[str, str]]:
        if self.metadata.get("kind") == "composite":
            ids = list(self.metadata.get("steps", []))
        else:
            ids = [self.source]
        modules = []
        for i, resolver_id in enumerate(ids):
            row = self.site.registry.get(resolver_id)
            artifact_id = json.loads(row.get("metadata") or "{}")["artifact_id"]
            modules.append((f"tool_{i}", self.site.artifacts.read(artifact_id).decode()))
        return modules

    def _payload(self, request: ResolveRequest) -> dict[str, Any]:
        inputs = {a: self.site.artifacts.read(a).decode(errors="replace")
                  for a in request.payload.get("inputs", [])}
        return {"goal": request.goal_description,
                "summary": request.payload.get("goal_summary", ""),
                "constraints": [{"id": c.id, "type": c.type.value, "title": c.title,
                                 "payload": c.payload} for c in request.constraints],
                "inputs": inputs, "feedback": request.feedback}


def _parse(result: dict[str, Any]) -> ResolutionOutput:
    """The tool's result, or a failed output that verification will reject with its reason."""
    if result.get("exit_code") == 0 and result.get("reason") is None:
        try:
            return ResolutionOutput.model_validate(json.loads(result.get("stdout") or ""))
        except (ValueError, ValidationError) as exc:
            detail = f"the tool's result is not a resolution output: {str(exc)[:300]}"
    else:
        detail = (f"the tool failed (exit {result.get('exit_code')}, "
                  f"{result.get('reason') or 'no sandbox reason'}): "
                  f"{str(result.get('stderr', ''))[-500:]}")
    return ResolutionOutput(artifact_type="error", format="text", content=detail,
                            notes="tool failure")


def runner_for(site: ToolSite, resolver_id: str) -> ToolRunner | None:
    """The runner of a registered script or composite tool; None for model-backed tools."""
    resolver = site.registry.find(resolver_id)
    if resolver is None:
        return None
    kind = json.loads(resolver.get("metadata") or "{}").get("kind")
    return ToolRunner(site, resolver) if kind in ("script", "composite") else None
