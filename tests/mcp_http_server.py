"""``moot mcp --http --port 0`` in a subprocess, for the tests that talk to it: it binds a free
loopback port itself, so no other program can take the port between a pick and the bind."""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from tests.signals import sigint_default

STARTED = re.compile(r"(http://127\.0\.0\.1:\d+/mcp)\?token=([\w-]+)")


class HttpServer:
    """``moot mcp --http`` in a subprocess; its stderr read line by line on a thread."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.port = 0  # the one it bound, once started() has read its URL
        self.folder = tmp_path / "sessions"
        command = [sys.executable, "-m", "tui", "mcp", "--http", "--port", "0"]
        command += ["--sessions-dir", str(self.folder), "--allow-read", str(tmp_path), *args]
        self.proc = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            preexec_fn=sigint_default,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.said: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)
        self.lines.put(None)

    def started(self) -> tuple[str, str]:
        """The URL and the token it printed once serving (the test fails if it never does)."""
        deadline = time.monotonic() + 60
        while True:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            assert line is not None, "moot mcp --http ended before it printed its URL:\n" + "".join(
                self.said
            )
            self.said.append(line)
            found = STARTED.search(line)
            if found:
                self.port = urlsplit(found.group(1)).port or 0
                return found.group(1), found.group(2)

    def stop(self) -> str:
        """Interrupt it as a person would (Ctrl+C); what it wrote on stdout (nothing, it must)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stdout is not None
        return self.proc.stdout.read()
