"""Reading a file a person named (a script, a tool and its code, an answer, a suggestion).

Whatever the path turns out to be (missing, a directory, a device such as /dev/zero,
far too large, not UTF-8 text, unreadable), the person gets one line naming it, raised
as the caller's own error type; nothing is read past the size limit.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kernel.errors import ConfigError, KernelError

MAX_TEXT_BYTES = 4 * 1024 * 1024  # far past any script, tool or answer written by hand


def read_user_text(path: Path, where: str, *, max_bytes: int = MAX_TEXT_BYTES,
                   error: type[KernelError] = ConfigError) -> str:
    """The UTF-8 text of ``path``; ``where`` names it in the message (``--script F``)."""
    try:
        # non-blocking, so that a named pipe is refused rather than waited on
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            os.close(fd)
            what = "a directory" if stat.S_ISDIR(kind) else "not a regular file"
            raise error(f"{where} is {what}: give a file")
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise error(f"{where}: no such file") from None
    except IsADirectoryError:
        raise error(f"{where} is a directory: give a file") from None
    except OSError as exc:
        raise error(f"{where} cannot be read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise error(f"{where} is larger than {max_bytes:,} bytes, the most read from it")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where} is not UTF-8 text (byte {exc.start})") from None
