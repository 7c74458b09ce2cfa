"""Strings from a model, a script or an imported graph, made safe to print.

Such a string may hold terminal escapes (``ESC]2;…`` retitles the window, ``ESC[2J``
clears the screen), carriage returns that overwrite what the kernel printed, bidi
controls that reorder a line, and zero-width characters that hide text. ``shown`` writes
every one of them as a visible ``\\uXXXX`` (the form JSON and Python read back), so what
reaches the terminal is what the string holds.

>>> shown("ok\\x1b]2;pwned\\x07 \\u202egnp.py")
'ok\\\\u001b]2;pwned\\\\u0007 \\\\u202egnp.py'
"""

from __future__ import annotations

import unicodedata

from rich import markup as markup_module

# control characters, format characters (bidi controls, zero-width spaces and joiners,
# the byte-order mark), line and paragraph separators, lone surrogates
_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_KEPT_IN_TEXT = frozenset("\n\t")


def shown(value: object, *, multiline: bool = False, markup: bool = False) -> str:
    """``value`` as text with every invisible or controlling character made visible.

    ``multiline`` keeps newlines and tabs (a file's text); ``markup`` also escapes rich
    markup, for text printed through a rich console (``[link=…]`` would write a
    hyperlink escape)."""
    text = str(value)
    if any(_hidden(c, multiline) for c in text):
        text = "".join(_visible(c) if _hidden(c, multiline) else c for c in text)
    return markup_module.escape(text) if markup else text


def _hidden(char: str, multiline: bool) -> bool:
    if multiline and char in _KEPT_IN_TEXT:
        return False
    return unicodedata.category(char) in _HIDDEN


def _visible(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def escape(value: object) -> str:
    """``rich.markup.escape`` that also makes hidden characters visible: for untrusted text
    inside console markup."""
    return shown(value, markup=True)
