"""Counting the words of a text."""
