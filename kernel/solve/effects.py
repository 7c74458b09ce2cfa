"""What a step asks the loop to do, and what it hands back: the vocabulary between a
step written as an effect producer and the dispatch loop that performs its effects.

A step is a generator (or, when it needs no request, a plain function returning its
``Done``). It reads the graph through a read-only view (``StepView``), *yields*
requests (``ModelCall``: one budget-gated call of an operation;
``Recall``: a verified record standing in for a call; ``Observe``: the history a
decision reads, recorded like a call) and is sent each request's
result; it *returns* ``Done``: its changes (``StepChanges``, in the order they are
applied) and what follows it (the goals to queue, or the next move on the same goal).

The step performs nothing itself. ``kernel.solve.perform`` is the one place that does:
it gates each call on the budget, records it in the ledger (or serves it from there on
resume and replay), and turns the changes into the step's commit. So a step can be
driven in a test by a fake view and scripted results, and taking a step ahead of its
turn (``kernel.solve.lookahead``) is advancing it to its first request.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Generic, TypeVar

from kernel.core.envelopes import Attempt, ConstraintSpec, Lineage, Verification
from kernel.core.goal_node import GoalChanges, GoalNode
from kernel.core.goals import GoalSpec
from kernel.core.state_machine import Status
from kernel.kg.failures import Diagnosis
from kernel.protocol import Operation, ResolveRequest, ToolDefinition
from kernel.refusal import RefusalReason
from kernel.runtime.gate import CLAUDE_ID
from kernel.runtime.progress import Kind

N = TypeVar("N")
N_co = TypeVar("N_co", covariant=True)


# -- requests: what a step asks for, and is sent the answer of ---------------------------

@dataclass(frozen=True)
class Sandbox:
    """The sandbox as the one who answers: the commands and files a request names run in
    a fresh workspace (verification's test runs)."""


@dataclass(frozen=True)
class Tool:
    """A registered tool as the one who answers: a script or composite tool runs in the
    sandbox through its own runner; any other resolver id is answered by the run's
    model."""

    resolver_id: str


# Who answers a call other than the run's model (None).
Answerer = Sandbox | Tool


@dataclass(frozen=True)
class ModelCall:
    """One budget-gated call of ``operation``; answered with its ``Proposal`` (a denial
    escalates to HIRE and a failed call refuses the goal, both in dispatch).
    ``pay=False`` leaves the spend to a change that writes it with what it pays for;
    ``answerer`` names who answers when it is not the run's model."""

    operation: Operation[Any]
    request: ResolveRequest
    resolver_id: str = CLAUDE_ID
    pay: bool = True
    answerer: Answerer | None = None

    @property
    def goal_id(self) -> str:
        return self.request.goal_id


@dataclass(frozen=True)
class Recall:
    """A verified record from the knowledge graph standing in for a call: ``read`` gives
    its rows, or None (nothing stands in: ask the model). Answered with the rows as the
    ledger holds them (served from there on resume and replay), or None."""

    name: str
    goal_id: str
    read: Callable[[], Any] = field(compare=False)


@dataclass(frozen=True)
class Observe:
    """What the knowledge graph says for one decision (a step's history), read by
    ``read``: answered with the rows as the ledger holds them (recorded before use, and
    served from there on resume and replay)."""

    name: str
    goal_id: str
    read: Callable[[], Any] = field(compare=False)
    source: str = "knowledge-graph"  # who answers, as the ledger names it


@dataclass(frozen=True)
class Register:
    """An artifact the step needs the id and content hash of before it ends (a candidate
    it weighs): answered with the ``Artifact`` as registered, riding the step's commit.
    Its id is taken as it is registered, like that of a ``NewArtifact``."""

    artifact: NewArtifact


@dataclass(frozen=True)
class OpenAttempt:
    """Open the goal's next attempt (1..T_max), which the step's spend and output name:
    answered with the ``Attempt``, whose id is taken as it is opened (it rides the step's
    commit). Ahead of its turn it is answered with the attempt as it would be opened."""

    goal_id: str
    resolver_id: str
    plan_artifact_id: str | None = None
    input_artifact_ids: tuple[str, ...] = ()
    feedback: dict[str, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class ChildIds:
    """The ids of the ``count`` children a decomposition is about to make in one commit:
    what is pending is stored first (but the goal's plain spend, which rides that
    commit), then the ids are taken as the children will be created. Answered with the
    ids, in order; ahead of its turn it ends the advance."""

    goal_id: str
    count: int


@dataclass(frozen=True)
class NewChildren:
    """Create these children of ``parent`` now, as a commit of its own (beside children
    it already has): given as (decomposition key, spec), with the constraints they
    inherit and, by key, the coupling constraints a child gets as its own; ``told`` is
    logged first. Answered with their ids, in order."""

    parent: GoalNode
    children: tuple[tuple[str, GoalSpec], ...]
    inherited: tuple[str, ...]
    coupling: tuple[tuple[str, tuple[str, ...]], ...] = ()
    told: Flow | None = None


# -- asked by intake --

@dataclass(frozen=True)
class AskPerson:
    """An intake question put to the person (operation ``intake``, answered as
    ``actor:human``): by whoever is there now (the terminal, a script's person) or by the
    answer stored on the question's request (``kernel hire answer ID --intake FILE``),
    recorded in the ledger like a call; ``told`` is logged first. Answered with the
    answer's ``Proposal``, or None when nobody is there to give it (the goal stays parked
    on the request). A person is never asked ahead of the turn: it ends the advance."""

    request: ResolveRequest
    told: tuple[Flow | Decision, ...] = ()

    @property
    def goal_id(self) -> str:
        return self.request.goal_id


# -- asked by BUILD --

@dataclass(frozen=True)
class NewChild:
    """Create one child of ``parent_id`` now, as a commit of its own, answering for the
    ``core`` constraints (stored first) and found again by its decomposition ``key``;
    ``told`` is logged first. Answered with its id."""

    parent_id: str
    spec: GoalSpec
    core: tuple[ConstraintSpec, ...]
    key: str
    told: tuple[Flow | Decision, ...] = ()


# -- asked by HIRE --

@dataclass(frozen=True)
class NewId:
    """The id of a ``kind`` entity the step's commit creates, taken now (what is pending
    is stored first, as for any id: ``Run.new_id``): answered with the id and the number
    of the commit it names. Ahead of its turn it ends the advance."""

    kind: str


@dataclass(frozen=True)
class HireQuestion:
    """A HIRE request put to the person (``actor:human``), who answers through
    ``kernel hire answer`` or at the terminal: answered with the ``Proposal`` of their
    ``HireAnswer``, recorded like a call, or None when nobody answers now (the goal stays
    parked). Never asked ahead of its turn."""

    request: ResolveRequest


Request = (ModelCall | Recall | Observe | Register | OpenAttempt | ChildIds | NewChildren
           | AskPerson | NewChild | NewId | HireQuestion)


# -- changes: what a step's commit writes, in order --------------------------------------

@dataclass(frozen=True)
class Wake:
    """The goals the step wakes, which the step's last commit stores as the queue."""

    goal_ids: tuple[str, ...]


@dataclass(frozen=True)
class NewArtifact:
    """An artifact to register (its bytes stored, its node riding the step's commit);
    with a ``key``, one registered under it before is used instead, unless none can be
    (``unseen``)."""

    goal_id: str
    content: str
    type: str
    format: str
    lineage: Lineage
    key: str | None = None
    unseen: bool = False
    metadata: tuple[tuple[str, Any], ...] = ()  # by name, in this order
    sigma: float | None = None  # the confidence it carries (a final artifact's sigma_system)


@dataclass(frozen=True)
class Transition:
    """Move the goal to ``to``, writing ``changes`` (what is pending rides it), led by
    the id of each of ``made``, registered first, as the property it names."""

    goal_id: str
    to: Status
    changes: GoalChanges | None = None
    made: tuple[tuple[str, NewArtifact], ...] = ()


@dataclass(frozen=True)
class UpdateGoal:
    """Write ``changes`` on a goal that stays in ``status``, as a commit of its own."""

    goal_id: str
    status: Status
    changes: GoalChanges


@dataclass(frozen=True)
class StoreConstraints:
    """Store these constraints (content-addressed, so storing one again is nothing) with
    the step's commit that names them (``ride=False``: at once, whatever follows)."""

    specs: tuple[ConstraintSpec, ...]
    ride: bool = True


@dataclass(frozen=True)
class AddRoles:
    """Add constraints to roles of the goal (by role), as a commit of its own."""

    goal_id: str
    roles: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True)
class SetRole:
    """Replace the goal's constraints of ``role`` and move it ``from_status`` → ``to``,
    writing ``changes``; with a ``pattern`` (``Patterns.row``) the goal becomes its
    instance, requiring ``capabilities``."""

    goal_id: str
    role: str
    ids: frozenset[str]
    from_status: Status
    to: Status
    changes: GoalChanges | None = None
    pattern: dict[str, Any] | None = None
    capabilities: tuple[str, ...] = ()


@dataclass(frozen=True)
class Flow:
    """A line of the goal's flow log."""

    goal_id: str
    text: str


@dataclass(frozen=True)
class Progress:
    """A moment told to whoever watches the run (never stored, never read by a
    decision): e.g. a call answered by a record instead."""

    kind: Kind
    text: str
    goal_id: str
    summary: str


@dataclass(frozen=True)
class Decision:
    """A decision the goal's log records (the run's, with no goal), with what was
    weighed and why."""

    goal_id: str | None
    decision: str
    candidates: tuple[Any, ...]
    chosen: Any
    rationale: str
    extra: tuple[tuple[str, Any], ...] = ()  # further details, by name, in this order


@dataclass(frozen=True)
class Reopen:
    """Backtrack to the goal: reopen it into ``to`` with ``changes``, invalidating its
    subtree; ``told`` (a flow line or a decision) is logged after it, followed by what
    the reopening invalidated."""

    goal_id: str
    to: Status
    changes: GoalChanges
    told: Flow | Decision | None = None


@dataclass(frozen=True)
class Decomposition:
    """A fresh decomposition as one commit: the children (their ids those ``ChildIds``
    answered), the constraints they inherit and the coupling constraints by key, the
    dependencies among them, their budgets split by ``weights`` from what the parent
    holds, and the parent's move to ``to`` with ``changes``."""

    parent: GoalNode
    children: tuple[tuple[str, GoalSpec], ...]
    ids: tuple[str, ...]
    inherited: tuple[str, ...]
    coupling: tuple[tuple[str, tuple[str, ...]], ...]
    edges: tuple[tuple[str, str], ...]
    weights: tuple[tuple[str, float], ...]  # by child id
    to: Status
    changes: GoalChanges


@dataclass(frozen=True)
class AddDependencies:
    """Add (goal, depends_on) edges among the goal's children, as a commit of its own
    (nothing when every edge is there)."""

    goal_id: str
    edges: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class AllocateChildren:
    """Give each child its share (by weight, with the reserve) of what the goal has left,
    as a commit of its own."""

    goal_id: str
    weights: tuple[tuple[str, float], ...]  # by child id
    share: Fraction | None = None  # of what the goal has left (None: all but the reserve)


@dataclass(frozen=True)
class RecordCause:
    """Link the failed attempt to the cause its feedback diagnosed (a guarded commit of
    its own, leaving the step's proposals unconsumed)."""

    attempt_id: str
    cause: Diagnosis


@dataclass(frozen=True)
class StoreVerification:
    """Store the verification pending since step 6 now, as its own commit, instead of
    letting it ride the goal's next move."""


@dataclass(frozen=True)
class Pay:
    """The spend of a call asked with ``pay=False``, written with what it paid for: the
    attempt, and the ``output`` it produced (registered first). A call served again after
    a crash (``replayed``) and paid for before is not paid twice."""

    goal_id: str
    cost_usd: float
    seconds: float
    resolver_id: str
    operation: str
    proposal: str  # the ledger hash of what is paid for
    replayed: bool
    attempt_id: str | None = None
    output: NewArtifact | None = None


@dataclass(frozen=True)
class RecordVerification:
    """Record the attempt's verification, with the method that decided each check, a
    cause a check ``diagnosed`` itself, and the ``sigma_paths`` rows it changes; stored
    now, or with ``ride`` by the goal's next move."""

    attempt: Attempt
    verification: Verification
    methods: tuple[tuple[str, str], ...]
    diagnosed: tuple[str, str] | None
    sigma_paths: tuple[dict[str, Any], ...]
    ride: bool


@dataclass(frozen=True)
class SetSigmaPaths:
    """Store the goal's and its live descendants' sigma_path values that changed (the
    rows of ``StepView.subtree_sigmas``), as a commit of its own; nothing when none."""

    goal_id: str
    rows: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Weigh:
    """Record how an attempt's candidates were weighed (each one's place and verdict, the
    chosen one as the attempt's and the goal's output), as a commit of its own."""

    attempt_id: str
    chosen_id: str
    chosen_kind: str
    candidates: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Refusal:
    """Record a refusal for ``goal_id`` in the ledger (once: a resumed run that refuses
    again the same way does not record it twice)."""

    goal_id: str
    reason: RefusalReason
    detail: str
    facts: tuple[tuple[str, Any], ...] = ()  # the remedy's figures, by name


@dataclass(frozen=True)
class RefuseGoal:
    """Refuse the goal for ``reason`` (recorded in the ledger with ``facts``), mark it
    infeasible and say why in its log."""

    goal: GoalNode
    reason: RefusalReason
    detail: str
    facts: tuple[tuple[str, str], ...] = ()


# -- made by HIRE --

@dataclass(frozen=True)
class OpenRequest:
    """Raise the capability request ``props`` describe, or join the one raised before
    with its fingerprint, and park the goal on it: the goal moves ``from_status`` →
    ``to`` writing ``changes`` (which name the request it awaits), in one commit; with
    ``supersede``, the goal's earlier request of the same tag is marked delivered."""

    goal_id: str
    from_status: Status
    to: Status
    changes: GoalChanges
    fingerprint: str
    capability_tag: str
    props: tuple[tuple[str, Any], ...]  # by name, in this order
    supersede: bool = False


@dataclass(frozen=True)
class DeclineRequest:
    """The person declined the request: it is never asked again, and the goal (in
    ``status``) is infeasible, in one commit; ``answer`` is their answer as JSON."""

    goal_id: str
    status: Status
    request_id: str
    answer: str


@dataclass(frozen=True)
class GrantBudget:
    """The person answered the request with more budget: ``cost`` micro-dollars and
    ``time`` ms allocated to the goal (in ``status``) as budget event ``event_id``, the
    request delivered and the goal's ``changes`` written, in one commit."""

    goal_id: str
    status: Status
    request_id: str
    answer: str
    cost: int
    time: int
    event_id: str
    changes: GoalChanges


# -- made by intake --

@dataclass(frozen=True)
class ConfirmIntake:
    """The goal the person confirmed in place of the one typed, as one commit: the root's
    ``properties`` (description, summary, the intake closed; by name, in this order), its
    core the constraints ``core_ids`` (stored before), and the question it last asked
    marked delivered."""

    goal_id: str
    core_ids: tuple[str, ...]
    properties: tuple[tuple[str, Any], ...]


# -- made by BUILD (and by HIRE, for a tool a person gives) --

@dataclass(frozen=True)
class RegisterTool:
    """Register ``tool`` as ``resolver_id`` for ``goal``, with who built it, the
    artifacts it came from, the tools it replaces and the goal's ``goal_changes``, in one
    commit (its code stored first, found again by ``key``)."""

    tool: ToolDefinition
    resolver_id: str
    goal: GoalNode
    builder_id: str
    lineage_inputs: tuple[str, ...]
    replaces: tuple[str, ...]
    goal_changes: GoalChanges
    key: str
    request_id: str | None = None


Change = (Wake | Transition | UpdateGoal | StoreConstraints | SetRole | AddRoles | Flow | Progress
          | Decision | Reopen | Decomposition | AddDependencies | AllocateChildren
          | RecordCause | StoreVerification | RecordVerification | SetSigmaPaths | Weigh
          | Pay | Refusal | RefuseGoal | ConfirmIntake | RegisterTool | OpenRequest
          | DeclineRequest | GrantBudget)


@dataclass(frozen=True)
class StepChanges:
    """A step's changes, applied in this order by the loop as the step's commit."""

    changes: tuple[Change, ...] = ()

    def __add__(self, other: StepChanges | Change) -> StepChanges:
        more = other.changes if isinstance(other, StepChanges) else (other,)
        return StepChanges(self.changes + more)

    def __bool__(self) -> bool:
        return bool(self.changes)

    def only_told(self) -> bool:
        """Whether the changes are log lines only: nothing a later step reads."""
        return all(isinstance(c, (Flow, Progress, Decision)) for c in self.changes)

    def only_riding(self) -> bool:
        """Whether the changes are log lines and a verification riding the goal's next
        move: nothing the step that move starts reads before its first call."""
        return all(isinstance(c, (Flow, Progress, Decision))
                   or (isinstance(c, RecordVerification) and c.ride) for c in self.changes)


@dataclass(frozen=True)
class Done(Generic[N_co]):
    """What a step returns: its changes, then ``then`` (goals to queue, or a move).
    With ``reread``, the move's goal is read again once the changes are committed: the
    next step sees what they made of it (a verification recorded, an output chosen)."""

    then: N_co
    changes: StepChanges = StepChanges()
    reread: bool = False


# A step's body: yields requests, is sent their results, returns its ``Done``.
Effects = Generator[Request, Any, Done[N]]


def asking_nothing(done: Done[N]) -> Effects[N]:
    """The body of a step that needs no request: it ends at once with ``done``."""
    yield from ()
    return done
