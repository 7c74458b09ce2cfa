"""The boot graph's resolvers the kernel itself addresses by id (seeds/boot): a person,
the sandbox that runs verification commands, the self-model. Their implementations live
in ``resolvers/``; the kernel names them only by these ids."""

HUMAN_ID = "actor:human"
CODEX_ID = "resolver:codex-tools-0"
SELF_MODEL_ID = "resolver:self-model-0"
