"""Inside a sandbox that has a network grant: its only way out.

The sandbox has its own network namespace with nothing but loopback. This bridge listens
on 127.0.0.1:3128 there and hands each connection to the kernel's CONNECT proxy (a unix
socket mounted at /run/kernel-proxy/proxy.sock), which admits only the granted hosts. It
runs the command with HTTP(S)_PROXY pointing at itself and exits with its status.
"""

import contextlib
import os
import socket
import subprocess
import sys
import threading

PROXY_SOCKET = "/run/kernel-proxy/proxy.sock"
ADDRESS = ("127.0.0.1", 3128)


def pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy one direction; at its end, half-close the other side so what still flows
    the other way (a proxy's answer to a refused request) arrives."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def serve(server: socket.socket) -> None:
    while True:
        client, _ = server.accept()
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(PROXY_SOCKET)
        except OSError:
            client.close()
            continue
        threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client), daemon=True).start()


server = socket.create_server(ADDRESS)
threading.Thread(target=serve, args=(server,), daemon=True).start()
proxy = f"http://{ADDRESS[0]}:{ADDRESS[1]}"
environment = dict(os.environ, HTTPS_PROXY=proxy, HTTP_PROXY=proxy, https_proxy=proxy,
                   http_proxy=proxy, ALL_PROXY=proxy)
sys.exit(subprocess.call(sys.argv[1:], env=environment))
