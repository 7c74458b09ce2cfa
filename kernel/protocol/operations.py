"""The operations the kernel asks resolvers for, each typed by the output it accepts.

``Operation[Out]`` ties an operation's name (what the ledger records) to the model a
proposal must validate against, so ``gate.ask(k, goal, RESOLVE, ...)`` returns a
``Proposal[ResolutionOutput]``. Model operations also name the forced tool a model
answers through; a scripted proposer stands in for the model on exactly these.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from kernel.protocol import coverage
from kernel.protocol import plan_models as plan
from kernel.protocol import solve_models as solve
from kernel.protocol.hire_models import HireAnswer
from kernel.protocol.intake_models import GoalExtraction, IntakeAnswer
from kernel.protocol.requests import ResolveRequest

Out = TypeVar("Out", bound=BaseModel)
# What every prompt may show, from the request's own fields (and the goal's summary).
STANDARD_INPUTS = ("goal", "summary", "constraints", "feedback", "context")


@dataclass(frozen=True)
class Operation(Generic[Out]):
    name: str
    output: type[Out]
    tool: str = ""  # the tool a model is made to call; "" for operations no model answers
    description: str = ""
    # The prompt contract: the payload keys the step must give and the prompt shows, each
    # under its own name ($key in the template). None: no prompt (sandbox, person).
    inputs: tuple[str, ...] | None = None
    # What refuses an answer that validates but does not fit its request (the problems,
    # each naming what is wrong; a model's repair turn gets them). None: nothing does.
    refusals: Callable[[ResolveRequest, Any], list[str]] | None = None
    # Payload keys a request may give besides its inputs (the prompt shows each, with its
    # heading, only when given): the repository of a goal that changes one.
    optional: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        clash = set(self.inputs or ()) & set(STANDARD_INPUTS)
        if clash:
            raise ValueError(f"{self.name}: {sorted(clash)} are every prompt's own inputs")

    def problems(self, request: ResolveRequest, answer: Any) -> list[str]:
        """Why a validated ``answer`` to ``request`` is refused (empty: it is not)."""
        return self.refusals(request, answer) if self.refusals is not None else []

    def request(self, goal_id: str, **fields: Any) -> ResolveRequest:
        """A request for this operation on one goal; a model operation's payload must be
        exactly its inputs (a missing or unknown key is a kernel bug, caught here)."""
        request = ResolveRequest(operation=self.name, goal_id=goal_id, **fields)
        if self.inputs is not None:
            given = set(request.payload) - {"goal_summary"} - set(self.optional)
            if given != set(self.inputs):
                raise ValueError(f"{self.name}: the payload gives {sorted(given)}, the prompt "
                                 f"contract wants {sorted(self.inputs)}")
        return request


# -- answered by a model (or a script standing in for one) ------------------------------
EXTRACT_GOAL = Operation("extract_goal", GoalExtraction, "record_goal",
                         "Record the formal goal, its core constraints and what is unstated.",
                         ("intent_classes", "clarifications"))
IDENTIFY_CONSTRAINTS = Operation("identify_constraints", solve.IdentifiedConstraints,
                                 "record_constraints",
                                 "Record the constraints that apply to the goal.", ("inherited",))
SELECT_CONSTRAINTS = Operation("select_constraints", solve.SelectedConstraints,
                               "record_selection", "Record the minimal set of constraints.", ())
RANK_RESOLVERS = Operation("rank_resolvers", solve.ResolverRanking, "record_tool_plan",
                           "Record the tool plan and the candidates' scores.", ("candidates",))
RESOLVE = Operation("resolve", solve.ResolutionOutput, "record_output", "Record the output.",
                    ("inputs", "sandbox", "inherited", "last_output"), optional=("repository",))
VERIFY_SEMANTIC = Operation("verify_semantic", solve.SemanticVerification, "record_judgments",
                            "Record one judgment per semantic constraint.",
                            ("output", "test_results"))
DECOMPOSE = Operation("decompose", solve.Decomposition, "record_decomposition",
                      "Record the children, their dependencies and which part answers for "
                      "each of the goal's constraints.", ("output", "inherited"),
                      refusals=coverage.problems)
CLASSIFY_LEAF = Operation("classify_leaf", solve.LeafClassification, "record_leaf",
                          "Record whether the goal is a leaf.", ("output", "inherited"))
GENERATE_FEEDBACK = Operation("generate_feedback", solve.Feedback, "record_feedback",
                              "Record the diagnosis and fixes.",
                              ("output", "violations", "history"))
DETECT_CAPABILITY_GAP = Operation("detect_capability_gap", solve.CapabilityGap, "record_gap",
                                  "Record the missing capability.",
                                  ("tried_resolvers", "failures", "capabilities", "sandbox"))
CHECK_GLOBAL_CONSISTENCY = Operation("check_global_consistency", solve.ConsistencyReview,
                                     "record_review",
                                     "Record the consistency verdict and conflicts.",
                                     ("couplings", "couplings_not_shown", "leaves"))
ASSEMBLE = Operation("assemble", solve.Assembly, "record_assembly",
                     "Record the final deliverable.", ("parts", "output", "file_rule"))
PLAN_CONSTRAINTS = Operation("plan_constraints", plan.ExtractedConstraints,
                             "record_plan_constraints",
                             "Record the goal's explicit and implicit constraints.", ())
PLAN_TASKS = Operation("plan_tasks", plan.TaskDag, "record_task_dag",
                       "Record the task DAG with estimates.", ("planned_constraints",))
SURVEY_APPROACHES = Operation("survey_approaches", plan.ApproachSurvey, "record_surveys",
                              "Record the alternative approaches per task.",
                              ("tasks", "planned_constraints", "rollup"))

MODEL_OPERATIONS: dict[str, Operation[Any]] = {op.name: op for op in (
    EXTRACT_GOAL, IDENTIFY_CONSTRAINTS, SELECT_CONSTRAINTS, RANK_RESOLVERS, RESOLVE, VERIFY_SEMANTIC,
    DECOMPOSE, CLASSIFY_LEAF, GENERATE_FEEDBACK, DETECT_CAPABILITY_GAP,
    CHECK_GLOBAL_CONSISTENCY, ASSEMBLE, PLAN_CONSTRAINTS, PLAN_TASKS, SURVEY_APPROACHES,
)}

# -- answered by the sandbox and by a person ------------------------------------------
RUN_TESTS = Operation("run_tests", solve.SandboxRun)
HIRE = Operation("hire", HireAnswer)
INTAKE = Operation("intake", IntakeAnswer)
