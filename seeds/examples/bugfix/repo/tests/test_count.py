from wordstats.count import count, longest
from wordstats.report import summary


def test_single_spaces():
    assert count("one two three") == 3


def test_any_whitespace_separates_words():
    assert count("one  two\tthree\nfour") == 4


def test_empty_text_has_no_words():
    assert count("") == 0 and longest("   ") == ""


def test_summary():
    assert summary("a bb  ccc") == "3 words, longest: 'ccc'"
