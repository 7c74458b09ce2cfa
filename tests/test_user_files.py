"""A file a person names is read as UTF-8 text of bounded size, or refused in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kernel.errors import ConfigError
from kernel.solve.tools import ToolDefinitionError, load_tool_file
from kernel.user_files import read_user_text


def test_what_is_not_a_small_text_file_is_one_line_naming_it(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # opening it to read would wait for a writer for ever
    binary = tmp_path / "binary"
    binary.write_bytes(b"ok\xff\xfe")
    large = tmp_path / "large"
    large.write_bytes(b"x" * 101)
    cases = {
        Path("/dev/zero"): "is not a regular file",  # endless: nothing is read
        fifo: "is not a regular file",
        tmp_path: "is a directory",
        tmp_path / "missing": "no such file",
        binary: "is not UTF-8 text (byte 2)",
        large: "is larger than 100 bytes",
    }
    for path, expected in cases.items():
        with pytest.raises(ConfigError) as caught:
            read_user_text(path, f"--thing {path}", max_bytes=100)
        message = str(caught.value)
        assert message.startswith(f"--thing {path}") and expected in message, message
        assert "\n" not in message
    fine = tmp_path / "fine"
    fine.write_text("héllo", encoding="utf-8")
    assert read_user_text(fine, "fine", max_bytes=100) == "héllo"


def test_a_tool_file_pointing_its_script_at_a_device_is_refused(tmp_path: Path) -> None:
    tool = tmp_path / "tool.yaml"
    tool.write_text("label: t\ncapabilities: [x]\nscript: /dev/zero\n")
    with pytest.raises(ToolDefinitionError, match=r"script '/dev/zero' is not a regular file"):
        load_tool_file(tool)
