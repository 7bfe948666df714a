"""A session file's fsyncs on threads: the event loop writes, a thread waits for the disk.

Many debates share one event loop (``moot batch``, ``moot mcp``, the console); an fsync
on the loop stops them all for as long as the disk takes. Here the writes stay on the
loop, in order, and each fsync runs on a pool thread; the disk takes many fsyncs of
different files at once. Commits that arrive while an fsync is in flight share the
next one, which covers every byte written before it started.
"""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

FSYNC_THREADS = 32  # a disk keeps this many fsyncs of different files in flight at once

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _fsync_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(FSYNC_THREADS, thread_name_prefix="moot-fsync")
        return _pool


class Durability:
    """How far one open file is written and how far it is on disk, in bytes."""

    def __init__(self, size: int) -> None:
        self.written = size  # the file's end after the last write
        self.synced = size  # every byte before this has had its fsync return
        self._flight: Future[None] | None = None
        self._flight_covers = size

    def wrote(self, end: int) -> None:
        self.written = end

    def synced_now(self, end: int) -> None:
        """An fsync on this thread returned (or the file was replaced by a synced one)."""
        self.written = self.synced = end

    async def wait(self, fd: int) -> None:
        """Return once every byte written so far is on disk; an fsync's OSError is raised."""
        while self.synced < self.written:
            if self._flight is None or self._flight.done():
                self._flight_covers = self.written
                self._flight = _fsync_pool().submit(os.fsync, fd)
            flight, covers = self._flight, self._flight_covers
            await asyncio.shield(asyncio.wrap_future(flight))  # a cancelled waiter: it runs on
            self.synced = max(self.synced, covers)

    def settle(self) -> None:
        """Block until the fsync in flight (if any) has returned: before its fd is closed."""
        if self._flight is not None:
            try:
                self._flight.result()
            except OSError:
                pass  # its waiter is told; the caller syncs (or drops) what follows
            self._flight = None
