"""A graph-database-backed planning kernel.

The deterministic core (state, budgets, dependencies, ledger) lives here; every
Cypher statement it runs is a named query under ``cypher/``.
"""

__version__ = "0.1.0"
