"""Repositories: the only code above the store that names a Cypher statement.

Each module serves one aggregate of the graph (capability requests, the knowledge
graph's readers, the views people read, exports, benchmarks' probes). Its functions say
which statement they run and return typed rows, so a caller never spells a statement
name or reads a row by a key it has to guess. The aggregates in ``kernel.core`` (runs,
goals, attempts, budget, constraints, the registry, the ledger) own their statements
the same way.
"""
