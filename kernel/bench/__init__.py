"""Benchmarks the project ships: speed targets are checked by these figures, not by unit tests."""
