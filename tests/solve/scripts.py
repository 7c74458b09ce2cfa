"""Build scripted-proposal files for end-to-end tests (semantic-only goals: no sandbox,
so two executions are byte-identical)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def identify(goal: str, *titles: str) -> dict[str, Any]:
    return {"operation": "identify_constraints", "goal": goal, "cost_usd": 0.01, "seconds": 2,
            "output": {"required_capabilities": ["generate_code"], "constraints": [
                {"type": "semantic", "domain": "quality", "title": t, "explicit": True}
                for t in titles]}}


def resolve(goal: str, content: str, repeat: bool = False) -> dict[str, Any]:
    return {"operation": "resolve", "goal": goal, "cost_usd": 0.05, "seconds": 10,
            "repeat": repeat,
            "output": {"artifact_type": "doc", "format": "markdown", "content": content}}


def judge(goal: str, title: str, passed: bool, sigma: float, repeat: bool = False) -> dict:
    return {"operation": "verify_semantic", "goal": goal, "cost_usd": 0.01, "seconds": 3,
            "repeat": repeat, "output": {"checks": [
                {"constraint_id": title, "passed": passed, "sigma": sigma,
                 "rubric_trace": f"judged {'good' if passed else 'lacking'}"}]}}


def leaf(goal: str, is_leaf: bool, repeat: bool = False) -> dict[str, Any]:
    return {"operation": "classify_leaf", "goal": goal, "repeat": repeat, "output": {
        "is_leaf": is_leaf, "leaf_kind": "atomic" if is_leaf else None,
        "leaf_reason": "small enough" if is_leaf else "needs parts"}}


def decompose(goal: str, children: list[tuple[str, str, float]],
              dependencies: list[tuple[str, str]]) -> dict[str, Any]:
    return {"operation": "decompose", "goal": goal, "cost_usd": 0.02, "seconds": 5, "output": {
        "rationale": "parts in order",
        "children": [{"key": k, "goal_description": d, "goal_summary": d,
                      "relative_complexity": w} for k, d, w in children],
        "dependencies": [{"child": c, "depends_on": d} for c, d in dependencies]}}


def consistent(goal: str) -> dict[str, Any]:
    return {"operation": "check_global_consistency", "goal": goal, "cost_usd": 0.02,
            "seconds": 4, "output": {"verdict": "SAT", "conflicts": []}}


def assemble(goal: str, content: str = "assembled") -> dict[str, Any]:
    return {"operation": "assemble", "goal": goal, "cost_usd": 0.02, "seconds": 4,
            "output": {"content": content, "format": "markdown"}}


def feedback(goal: str, cites: str | None = None, evidence: str = "judged lacking",
             ) -> dict[str, Any]:
    """A diagnosis; it cites the violated constraint ``cites`` with ``evidence`` from its
    trace (without, it is stored as an undiagnosed failure of the constraint)."""
    output: dict[str, Any] = {"summary": "be more specific", "failure_mode": "too_vague"}
    if cites is not None:
        output["per_constraint"] = [{"constraint_id": cites, "diagnosis": "too vague",
                                     "fix": "be specific", "evidence": evidence}]
    return {"operation": "generate_feedback", "goal": goal, "cost_usd": 0.01, "seconds": 2,
            "repeat": True, "output": output}


def write(path: Path, entries: list[dict[str, Any]], fallback: dict | None = None) -> Path:
    path.write_text(yaml.safe_dump({"version": 1, "proposals": entries,
                                    "fallback": fallback or {}}, sort_keys=False))
    return path


def slow_test(path: Path, test_file: str, seconds: float, classify: bool = True) -> Path:
    """A goal whose one logic constraint is a sandboxed test that sleeps ``seconds``."""
    entries: list[dict[str, Any]] = [
        {"operation": "identify_constraints", "goal": "*", "output": {"constraints": [
            {"type": "logic", "domain": "software", "title": "waits", "explicit": True,
             "payload": {"check": "test", "tests": ["test_waits"]}}]}},
        {"operation": "resolve", "goal": "*", "output": {
            "artifact_type": "code", "format": "python", "content": "VALUE = 1\n",
            "tests": {test_file: f"import time\n\n\ndef test_waits():\n"
                                 f"    time.sleep({seconds})\n"}}}]
    if classify:
        entries.append({"operation": "classify_leaf", "goal": "*", "output": {
            "is_leaf": True, "leaf_kind": "atomic", "leaf_reason": "one test"}})
    return write(path, entries)
