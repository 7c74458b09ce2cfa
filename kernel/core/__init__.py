"""The deterministic kernel core (sigma = 1.0): state machine, constraints, budget,
dependencies, artifacts, attempts, confidence and the tiered log, all persisted in
the graph, one named statement per state change."""
