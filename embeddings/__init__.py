"""Sentence embeddings for goal similarity (content-hash cached)."""
