"""``moot serve`` for tests, on a port no other program can take first.

A port picked free and handed over later can be taken in between by any socket on the
machine (a client's own end of a connection included): ``moot serve --port 0`` binds one
itself and prints it, and the in-process server binds before it builds its guard.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from tests.signals import sigint_default
from tui.commands.serve import listen, server
from tui.httpguard import Guard

PRINTED = re.compile(r"open (http://\S+)")


@contextmanager
def serve_process(log: Path, **env: str) -> Iterator[tuple[str, int]]:
    """``moot serve --port 0`` in its own process: the URL it printed and its port, once
    that port answers; interrupted (Ctrl+C) after."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tui", "serve", "--port", "0", "--host", "127.0.0.1"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
            preexec_fn=sigint_default,
        )
    try:
        deadline = time.monotonic() + 60
        found = None
        while found is None:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            found = PRINTED.search(log.read_text())
            if found is None:
                time.sleep(0.05)
        port = urlsplit(found.group(1)).port
        assert port, found.group(1)
        # The port answers once the site is bound; the banner is printed at start-up.
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        yield found.group(1), port
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@asynccontextmanager
async def guarded_app(command: str, token: str | None) -> AsyncIterator[tuple[int, Guard]]:
    """moot serve's guarded app in this process, on a loopback port bound before its
    guard is made (the guard names the port); yields the port and the guard."""
    sockets = listen("127.0.0.1", 0)
    port = sockets[0].getsockname()[1]
    guard = Guard.for_server("127.0.0.1", port, public=False, token=token)
    runner = web.AppRunner(await server(command, "127.0.0.1", port, guard)._make_app())
    await runner.setup()
    try:
        for sock in sockets:
            await web.SockSite(runner, sock).start()
        yield port, guard
    finally:
        await runner.cleanup()
        for sock in sockets:
            sock.close()
