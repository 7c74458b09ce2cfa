"""Words and their counts."""


def words(text):
    """The words of ``text``: what lies between runs of whitespace."""
    return [w for w in text.split(" ")]


def count(text):
    """How many words ``text`` holds."""
    return len(words(text))


def longest(text):
    """The longest word of ``text`` (the first of equals), or '' when it has none."""
    return max(words(text), key=len, default="")
