"""The knowledge graph the kernel learns from: goal patterns and their history."""
