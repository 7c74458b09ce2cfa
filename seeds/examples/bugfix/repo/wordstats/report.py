"""A one-line report of a text."""

from wordstats.count import count, longest


def summary(text):
    return f"{count(text)} words, longest: {longest(text)!r}"
