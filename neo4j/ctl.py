"""Build, start and stop the local Neo4j server (neo4j/Launcher.java), standard library only.

    python3 neo4j/ctl.py start [--home DIR] [--bolt-port N] [--http-port N]
    python3 neo4j/ctl.py stop  [--home DIR]
    python3 neo4j/ctl.py env   [--home DIR]   # the lines that point the kernel at it

``make neo4j`` and ``make neo4j-stop`` call this with the checkout's ``.neo4j/``; the test
suite starts its own server (``.neo4j/test``, other ports) so that tests, which empty the
graph, never touch yours. The first ``start`` builds the launcher with Maven (once), makes a
password (``HOME/password``, mode 0600) that becomes user neo4j's before the first start, and
waits until Bolt answers a handshake. A second ``start`` while it runs says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent
CLASSPATH_FILE = HERE / "target" / "classpath.txt"
DEFAULT_HOME = CHECKOUT / ".neo4j"
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 60.0
HEAP = os.environ.get("KERNEL_NEO4J_HEAP", "1g")
# More JVM options, e.g. the test suite's servers trade peak speed for less CPU at start.
JAVA_OPTIONS = os.environ.get("KERNEL_NEO4J_JAVA_OPTIONS", "").split()


class NotAvailable(Exception):
    """Java or Maven is missing: this machine cannot run the local server."""


def java() -> str:
    """Java 17 or newer: JAVA_HOME's if set, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not found or not Path(found).exists():
        raise NotAvailable("no Java here (install a JDK 17+, e.g. Debian's openjdk-17-jdk-headless)")
    return found


def build() -> None:
    """Build the launcher with Maven unless its classpath is newer than its sources."""
    sources = [HERE / "pom.xml", *sorted((HERE / "src").rglob("*.java"))]
    if CLASSPATH_FILE.exists() and (HERE / "target" / "classes").exists() and all(
            s.stat().st_mtime <= CLASSPATH_FILE.stat().st_mtime for s in sources):
        return
    mvn = shutil.which("mvn")
    if not mvn:
        raise NotAvailable("no Maven here (install Debian's maven)")
    print("building the Neo4j launcher with Maven (the first build downloads Neo4j from "
          "Maven Central)...", file=sys.stderr)
    started = time.monotonic()
    done = subprocess.run([mvn, "-q", "-B", "-Dstyle.color=never", "package", "-DskipTests"],
                          cwd=HERE, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"the Maven build of {HERE} failed (exit {done.returncode}):\n"
                 f"{(done.stdout + done.stderr)[-3000:]}")
    print(f"built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    CLASSPATH_FILE.touch()


def bolt_answers(port: int, timeout: float = 2.0) -> bool:
    """True when a Bolt server on 127.0.0.1:port accepts a version handshake."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            # The magic preamble, then four proposed versions: 5.x (range 4), 4.4.
            sock.sendall(bytes.fromhex("6060B017") + bytes.fromhex("00040405") +
                         bytes.fromhex("00000404") + bytes(8))
            answer = sock.recv(4)
            return len(answer) == 4 and answer != bytes(4)
    except OSError:
        return False


def _pid(home: Path) -> int | None:
    """The launcher's pid from HOME/neo4j.pid, if that process is still this launcher (a
    pid left from before a reboot may belong to something else by now)."""
    try:
        pid = int((home / "neo4j.pid").read_text())
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, ValueError):
        return None
    return pid if b"kernel.neo4j.Launcher" in command and str(home).encode() in command else None


def _ports(home: Path) -> tuple[int, int] | None:
    try:
        bolt, http = (home / "ports").read_text().split()
        return int(bolt), int(http)
    except (OSError, ValueError):
        return None


def password(home: Path) -> str:
    path = home / "password"
    if not path.exists():
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            # Never a leading '-': the launcher would read the password as an option.
            out.write("k" + secrets.token_urlsafe(18) + "\n")
    os.chmod(path, 0o600)
    return path.read_text().strip()


def env_lines(home: Path) -> list[str]:
    ports = _ports(home)
    bolt = ports[0] if ports else 7687
    return [f"KERNEL_GRAPH=neo4j://127.0.0.1:{bolt}", f"NEO4J_PASSWORD={password(home)}"]


def start(home: Path, bolt: int, http: int) -> int:
    """Start the server unless it runs; return its pid once Bolt answers."""
    running, ports = _pid(home), _ports(home)
    if running and ports and bolt_answers(ports[0]) and browser_answers(ports[1]):
        print(f"Neo4j is already running (pid {running}, {home}; Browser on "
              f"http://127.0.0.1:{ports[1]}/browser/)", file=sys.stderr)
        return running
    if running:  # started but not answering yet: wait for it
        return _wait(home, running, _ports(home) or (bolt, http))
    if bolt_answers(bolt):
        sys.exit(f"something else already answers Bolt on 127.0.0.1:{bolt}: stop it, or pick "
                 "another port with --bolt-port (make neo4j NEO4J_BOLT_PORT=...)")
    if _port_taken(http):
        sys.exit(f"something else already listens on 127.0.0.1:{http}: stop it, or pick "
                 "another port with --http-port (make neo4j NEO4J_HTTP_PORT=...)")
    java_bin = java()
    build()
    password(home)
    (home / "logs").mkdir(parents=True, exist_ok=True)
    (home / "ports").write_text(f"{bolt} {http}\n")
    classpath = [str(HERE / "target" / "classes"), *CLASSPATH_FILE.read_text().strip().split(":")]
    log = open(home / "logs" / "launcher.log", "ab")  # noqa: SIM115 - handed to the child
    started = time.monotonic()
    child = subprocess.Popen(
        [java_bin, f"-Xmx{HEAP}", "-XX:+UseG1GC", *JAVA_OPTIONS, "-Dfile.encoding=UTF-8",
         "-cp", ":".join(classpath), "kernel.neo4j.Launcher", str(home), str(bolt), str(http)],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()
    (home / "neo4j.pid").write_text(f"{child.pid}\n")
    pid = _wait(home, child.pid, (bolt, http))
    print(f"Neo4j started in {time.monotonic() - started:.1f} s (pid {pid}; Browser on "
          f"http://127.0.0.1:{http}/browser/, logs in {home / 'logs'})", file=sys.stderr)
    return pid


def browser_answers(port: int, timeout: float = 2.0) -> bool:
    """True when Neo4j Browser's page is served on 127.0.0.1:port (HTTP comes up a moment
    after Bolt: a person who opens it at once should find it)."""
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/browser/", timeout=timeout) as page:
            return bool(page.status == 200)
    except OSError:
        return False


def _wait(home: Path, pid: int, ports: tuple[int, int]) -> int:
    """The pid once Bolt and the Browser both answer; exits saying why if they never do."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if bolt_answers(ports[0]) and browser_answers(ports[1]):
            return pid
        try:
            os.kill(pid, 0)
            if _zombie(pid):
                raise ProcessLookupError
        except ProcessLookupError:
            tail = (home / "logs" / "launcher.log").read_text(errors="replace").splitlines()[-15:]
            sys.exit("Neo4j stopped while starting:\n" + "\n".join(tail))
        time.sleep(0.5)
    sys.exit(f"Neo4j did not answer Bolt on 127.0.0.1:{ports[0]} and HTTP on {ports[1]} within "
             f"{START_TIMEOUT_S:.0f} s; see {home / 'logs'}")


def _port_taken(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return False


def stop(home: Path) -> None:
    pid = _pid(home)
    if pid is None:
        print(f"Neo4j is not running ({home})", file=sys.stderr)
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline and _pid(home) and not _zombie(pid):
        time.sleep(0.3)
    if _pid(home) and not _zombie(pid):
        os.kill(pid, signal.SIGKILL)
    (home / "neo4j.pid").unlink(missing_ok=True)
    print(f"Neo4j stopped ({home})", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="The heap is KERNEL_NEO4J_HEAP (default 1g); more JVM options go in "
               "KERNEL_NEO4J_JAVA_OPTIONS. Each home is one server: its "
               "data, logs, password (0600) and the ports it was started with.")
    parser.add_argument("command", choices=["start", "stop", "env", "build"],
                        help="start: build if needed, start, and wait until Bolt and the "
                             "Browser answer (a running server is left as it is); stop: "
                             "stop it; env: print the lines that point the kernel at it; "
                             "build: only build the launcher with Maven")
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME,
                        help=f"the server's directory (default: {DEFAULT_HOME})")
    parser.add_argument("--bolt-port", type=int, default=7687,
                        help="the Bolt port on 127.0.0.1 the kernel connects to (default 7687)")
    parser.add_argument("--http-port", type=int, default=7474,
                        help="the HTTP port on 127.0.0.1 that serves Neo4j Browser "
                             "(default 7474)")
    parser.add_argument("--if-available", action="store_true",
                        help="without Java or Maven, say so and exit 0")
    args = parser.parse_args(argv)
    home = args.home.resolve()
    try:
        if args.command == "build":
            java()
            build()
        elif args.command == "start":
            start(home, args.bolt_port, args.http_port)
            print("\n".join(env_lines(home)))
        elif args.command == "stop":
            stop(home)
        else:
            print("\n".join(env_lines(home)))
    except NotAvailable as exc:
        if args.if_available:
            print(f"note: {exc}: the Neo4j tests will be skipped", file=sys.stderr)
            return
        sys.exit(str(exc))


if __name__ == "__main__":
    main()
