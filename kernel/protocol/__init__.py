"""The proposal protocol: the operations the kernel asks for, the shapes of requests
and answers, and how a call fails. Resolvers implement it; the kernel depends on it and
on no resolver (it is handed them as a ``resolver_set.ResolverSet``)."""

from kernel.protocol.errors import (
    BACKOFF_SECONDS,
    AccessRefused,
    DeadlineReached,
    EnvironmentFault,
    NoProposalError,
    PermanentError,
    ResolverError,
    RetryableError,
    RetryClock,
    with_retries,
)
from kernel.protocol.hire_models import HireAnswer, ToolDefinition
from kernel.protocol.operations import MODEL_OPERATIONS, Operation
from kernel.protocol.proposer import Proposer
from kernel.protocol.requests import Estimate, Resolution, ResolveRequest

__all__ = [
    "BACKOFF_SECONDS", "MODEL_OPERATIONS", "AccessRefused", "DeadlineReached", "EnvironmentFault", "Estimate",
    "HireAnswer", "NoProposalError", "Operation", "PermanentError", "Proposer", "Resolution",
    "ResolveRequest", "ResolverError", "RetryClock", "RetryableError", "ToolDefinition",
    "with_retries",
]
