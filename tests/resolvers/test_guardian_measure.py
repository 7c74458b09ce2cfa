"""The guardian charges the sandbox for what the sandbox holds, never for the host's: a
sampled moment in which bubblewrap has made the sandbox's mounts its own but not yet
mounted its tmpfs must not count the host's disk as the sandbox's memory (under load
that window is long enough to be sampled, and a plain loop was ended for MEMORY_LIMIT)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from resolvers.sandbox import guardian


@pytest.mark.skipif(shutil.which("unshare") is None, reason="no unshare(1) here")
def test_a_process_that_still_sees_the_hosts_tmp_is_charged_nothing_for_it() -> None:
    child = subprocess.Popen(["unshare", "--user", "--map-root-user", "--mount", "sleep", "30"])
    try:
        own = os.readlink("/proc/self/ns/mnt")
        deadline = time.monotonic() + 10
        while os.readlink(f"/proc/{child.pid}/ns/mnt") == own:  # until it has unshared
            assert time.monotonic() < deadline, "unshare never made mounts of its own"
            time.sleep(0.01)
        host = os.statvfs("/tmp")
        assert host.f_blocks > host.f_bfree  # the host's /tmp holds something to miscount
        assert guardian._tmpfs_used([child.pid], ["/tmp"]) == 0
    finally:
        child.kill()
        child.wait()
