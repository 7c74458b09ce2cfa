"""The system calls a sandboxed command may not make, as a seccomp program for bubblewrap.

In the spirit of Flatpak's filter: a command that runs tests has no use for the kernel's
keyrings, io_uring, userfaultfd, ptrace, perf events, BPF, kexec, mounting, new
namespaces or personality flags, and each is a way out or a way to hold memory no limit
sees. The same filter refuses the places bytes could hide from the sandbox's limits:
memfds, System V shared memory, message queues and semaphores, POSIX message queues,
pipes grown past their default size and socket buffers raised past theirs. A signal to
the namespace's first process (the test supervisor) is refused as well.

The program is built with libseccomp (Debian's ``libseccomp2``, present wherever
systemd or apt are) through ctypes, exported as classic BPF and handed to bubblewrap
with ``--seccomp FD``; bubblewrap loads it (with no-new-privileges) just before it runs
the command. A system call of a foreign architecture (a 32-bit call from a 64-bit
process) kills the process: the filter only knows the native table.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import tempfile

from kernel.errors import KernelError

# Refused outright (EPERM): what a test never needs and an escape or a hidden store needs.
DENIED = (
    # the host's keyrings (the command also starts in a fresh session keyring)
    "add_key", "request_key", "keyctl",
    # asynchronous I/O rings and page-fault handlers: a large, often-exploited surface
    "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
    # other processes' memory, the kernel's own tracing and programs
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
    "perf_event_open", "bpf", "fanotify_init", "lookup_dcookie",
    # the system itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "syslog", "quotactl", "vhangup", "iopl",
    "ioperm", "modify_ldt", "uselib", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "open_by_handle_at", "name_to_handle_at",
    # mounts and namespaces
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "unshare", "setns",
    # memory no process owns: counted by no limit, so not allowed to exist
    "memfd_create", "memfd_secret",
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
)
# clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library fall
# back to clone, whose flags are checked below.
UNSUPPORTED = ("clone3",)

# NEWNS CGROUP UTS IPC USER PID NET (clone's low byte is the exit signal, so CLONE_NEWTIME
# exists only for unshare and clone3, both refused)
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000,
                    0x20000000, 0x40000000)
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
F_SETPIPE_SZ = 1031
SOL_SOCKET = 1
SOCKET_BUFFER_OPTIONS = (7, 8, 32, 33)  # SO_SNDBUF SO_RCVBUF SO_SNDBUFFORCE SO_RCVBUFFORCE
SIGNALLED_BY_PID = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open")

_ALLOW = 0x7FFF0000
_CMP_NE, _CMP_EQ, _CMP_MASKED_EQ = 1, 4, 7
_WORD = 0xFFFFFFFF


class SeccompUnavailable(KernelError):
    """libseccomp cannot be loaded or refuses the filter on this machine."""


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(
            "libseccomp is not installed, so the sandbox's system-call filter cannot be "
            "built (Debian/Ubuntu: apt-get install libseccomp2)") from exc
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int,
                                           ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return lib


class _Filter:
    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        self.ctx = lib.seccomp_init(_ALLOW)
        if not self.ctx:
            raise SeccompUnavailable("libseccomp could not start a filter")

    def rule(self, action: int, name: str, *compares: tuple[int, int, int, int]) -> None:
        number = self.lib.seccomp_syscall_resolve_name(name.encode())
        if number < 0:  # not a system call of this architecture
            return
        array = (_ArgCmp * max(len(compares), 1))(*(_ArgCmp(*c) for c in compares))
        status = self.lib.seccomp_rule_add_array(self.ctx, action, number, len(compares), array)
        if status < 0:
            raise SeccompUnavailable(f"libseccomp refused the rule for {name} "
                                     f"({os.strerror(-status)})")

    def export(self) -> bytes:
        with tempfile.TemporaryFile() as out:
            status = self.lib.seccomp_export_bpf(self.ctx, out.fileno())
            if status < 0:
                raise SeccompUnavailable(f"libseccomp could not export the filter "
                                         f"({os.strerror(-status)})")
            out.seek(0)
            return out.read()

    def release(self) -> None:
        self.lib.seccomp_release(self.ctx)


@functools.cache
def program() -> bytes:
    """The filter as classic BPF, built once per process."""
    built = _Filter(_library())
    try:
        deny = _errno_action(errno.EPERM)
        for name in DENIED:
            built.rule(deny, name)
        for name in UNSUPPORTED:
            built.rule(_errno_action(errno.ENOSYS), name)
        for flag in CLONE_NAMESPACES:
            built.rule(deny, "clone", (0, _CMP_MASKED_EQ, flag, flag))
        for request in (TIOCSTI, TIOCLINUX):
            built.rule(deny, "ioctl", (1, _CMP_MASKED_EQ, _WORD, request))
        built.rule(deny, "fcntl", (1, _CMP_EQ, F_SETPIPE_SZ, 0))
        for option in SOCKET_BUFFER_OPTIONS:
            built.rule(deny, "setsockopt", (1, _CMP_EQ, SOL_SOCKET, 0), (2, _CMP_EQ, option, 0))
        built.rule(deny, "personality", (0, _CMP_NE, 0, 0))  # PER_LINUX, no flags, only
        for name in SIGNALLED_BY_PID:  # pid 1 is the sandbox's supervisor
            built.rule(deny, name, (0, _CMP_EQ, 1, 0))
        return built.export()
    finally:
        built.release()


def keyctl_number() -> int | None:
    """The ``keyctl`` system call's number here (for joining a fresh session keyring)."""
    number = int(_library().seccomp_syscall_resolve_name(b"keyctl"))
    return number if number >= 0 else None
