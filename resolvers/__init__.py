"""Tools the kernel routes work to (Claude adapter, sandboxed executor, self-model, human)."""
