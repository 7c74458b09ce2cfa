"""``codex-tools-0``'s sandbox: a default-deny Constitution decides every command before
it runs; the runner then contains what it allows (unprivileged user, no network,
resource limits, output and time caps)."""

from resolvers.sandbox.policy import CommandRequest, Constitution, Decision, Reason
from resolvers.sandbox.runner import RunResult, Sandbox

__all__ = ["CommandRequest", "Constitution", "Decision", "Reason", "RunResult", "Sandbox"]
