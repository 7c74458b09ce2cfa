"""Diagnostics of a repository goal's test run, read from the report's verdicts and the
run's output: where each failing test failed and why, and which edited files do not
parse; and a test symbol named as pytest names it."""

from __future__ import annotations

from kernel.codebase.diagnostics import blocking, failing_tests, syntax_errors
from kernel.codebase.impact import node_id

PRINTED = """\
.F.E                                                                     [100%]
==================================== ERRORS ====================================
___________________ ERROR at setup of Case.test_with_fixture ___________________
tests/test_b.py:4: in setup_method
    raise RuntimeError("no database")
E   RuntimeError: no database
=================================== FAILURES ===================================
__________________________________ test_two ___________________________________
    def test_two():
>       assert words("a b") == 3
E       AssertionError: assert 2 == 3
tests/test_a.py:9: AssertionError
=========================== short test summary info ============================
FAILED tests/test_a.py::test_two - AssertionError: assert 2 == 3
ERROR tests/test_b.py::Case::test_with_fixture - RuntimeError: no database
"""


def test_each_failing_test_is_placed_and_explained_by_its_traceback() -> None:
    verdicts = {"tests/test_a.py::test_one": "passed", "tests/test_a.py::test_two": "failed",
                "tests/test_b.py::Case::test_with_fixture": "error",
                "tests/test_c.py::test_quiet": "failed"}
    assert failing_tests(verdicts, PRINTED) == [
        {"severity": "error", "file": "tests/test_a.py", "line": 9, "code": "test_failed",
         "message": "AssertionError: assert 2 == 3"},
        {"severity": "error", "file": "tests/test_b.py", "line": 4, "code": "test_error",
         "message": "RuntimeError: no database"},
        {"severity": "error", "file": "tests/test_c.py", "line": None, "code": "test_failed",
         "message": "tests/test_c.py::test_quiet failed"}]  # the output shows nothing of it


def test_a_failed_test_command_is_one_diagnostic_without_a_file() -> None:
    found = failing_tests({"python3 -m unittest -v": "failed"}, "FAILED (failures=1)\n")
    assert found == [{"severity": "error", "file": None, "line": None, "code": "test_failed",
                      "message": "python3 -m unittest -v failed"}]
    assert blocking(found) and not blocking([])


def test_only_edited_python_files_that_do_not_parse_are_errors() -> None:
    files = {"a.py": "x = (\n", "b.py": "x = 1\n", "c.txt": "x = (\n", "d.py": "x = (\n"}
    assert syntax_errors(files, ["a.py", "b.py", "c.txt"]) == [
        {"severity": "error", "file": "a.py", "line": 1, "code": "syntax_error",
         "message": "'(' was never closed"}]


def test_a_test_symbol_is_named_as_pytest_names_it() -> None:
    assert node_id({"id": "", "qname": "tests.test_a.test_two", "file": "tests/test_a.py",
                    "line": 3}) == "tests/test_a.py::test_two"
    assert node_id({"id": "", "qname": "tests.test_b.Case.test_x", "file": "tests/test_b.py",
                    "line": 5}) == "tests/test_b.py::Case::test_x"
