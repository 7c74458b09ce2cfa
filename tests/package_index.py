"""A package index on this machine, for the dependency setup's tests (no internet): a
one-module wheel made here, served over HTTPS (a self-signed certificate for
``localhost`` made with the ``openssl`` command) as a PEP 503 simple index, counting
the requests it answers."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import shutil
import ssl
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

OPENSSL = shutil.which("openssl")
NAME, VERSION = "tinypkg", "1.0"
WHEEL = f"{NAME}-{VERSION}-py3-none-any.whl"


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(folder: Path) -> Path:
    """``tinypkg`` 1.0: one module whose ``VALUE`` is 42."""
    info = f"{NAME}-{VERSION}.dist-info"
    files = {f"{NAME}/__init__.py": b"VALUE = 42\n",
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
                                 .encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n"}
    record = "".join(f"{path},sha256={_digest(data)},{len(data)}\n" for path, data in files.items())
    record += f"{info}/RECORD,,\n"
    target = folder / WHEEL
    with zipfile.ZipFile(target, "w") as archive:
        for path, data in [*files.items(), (f"{info}/RECORD", record.encode())]:
            archive.writestr(path, data)
    return target


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for localhost and its key (the certificate is its own CA)."""
    assert OPENSSL is not None
    cert, key = folder / "index-ca.pem", folder / "index-key.pem"
    subprocess.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost",
                    "-addext", "basicConstraints=critical,CA:TRUE"],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@dataclass
class PackageIndex:
    port: int
    cert: Path
    requests: list[str] = field(default_factory=list)

    @property
    def host(self) -> str:
        return f"localhost:{self.port}"

    @property
    def url(self) -> str:
        return f"https://localhost:{self.port}/simple"


@contextlib.contextmanager
def package_index(folder: Path) -> Iterator[PackageIndex]:
    """Serve ``tinypkg`` at https://localhost:PORT/simple/ until the block ends."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = build_wheel(folder)
    data = wheel.read_bytes()
    cert, key = make_certificate(folder)
    pages = {"/simple/": f'<a href="/simple/{NAME}/">{NAME}</a>'.encode(),
             f"/simple/{NAME}/": (f'<a href="/files/{WHEEL}#sha256='
                                  f'{hashlib.sha256(data).hexdigest()}">{WHEEL}</a>').encode()}
    index = PackageIndex(port=0, cert=cert)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            index.requests.append(self.path)
            if self.path == f"/files/{WHEEL}":
                body, kind = data, "application/octet-stream"
            elif self.path in pages:
                body, kind = b"<html><body>" + pages[self.path] + b"</body></html>", "text/html"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    index.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
