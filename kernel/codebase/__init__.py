"""A user's codebase as facts: the snapshot of its files, what its Python defines,
imports and calls, and the traversals over that graph (impact, covering tests, what a
goal names). Above ``kernel.repositories``, which names the statements."""
