"""Decide links work once: the tokens already spent, kept in the config folder.

Only a hash of each token is kept (the file must never hand out a working link),
with the token's expiry, so a token is forgotten once it could not work anyway.
Spending a token and recording the decision happen under one lock on the file, so
two posts of the same link (two tabs, two ``moot serve``) cannot both decide.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tui.commands.decide_links import expiry_of
from tui.engine.basics.errors import MootInputError
from tui.engine.basics.safeio import FileRefused, describe, read_fd, write_all
from tui.paths import config_dir

USED_FILE = "decide-links-used"
_MAX_BYTES = 4 << 20  # 50,000 links spent within a week

T = TypeVar("T")


class LinkUsed(Exception):
    """The link was spent already: its decision is made."""


def used_path() -> Path:
    return config_dir() / USED_FILE


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _open(path: Path, flags: int) -> int:
    try:
        if flags & os.O_CREAT:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as err:
        why = f"cannot open the used decide links: {describe(err)}"
        raise MootInputError(str(path), [why]) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise MootInputError(str(path), ["the used decide links' file is not a regular file"])
    return fd


def _entries(fd: int, path: Path) -> dict[str, int]:
    """Each spent token's hash and its expiry, as the file holds them (bad lines ignored)."""
    try:
        data = read_fd(fd, _MAX_BYTES)
    except FileRefused as err:
        raise MootInputError(str(path), [f"the used decide links: {err}"]) from None
    found: dict[str, int] = {}
    for line in data.decode(errors="replace").splitlines():
        expiry, _, digest = line.partition(" ")
        if expiry.isdigit() and len(digest) == 64:
            found[digest] = int(expiry)
    return found


def is_used(token: str) -> bool:
    path = used_path()
    if not os.path.lexists(path):
        return False
    fd = _open(path, os.O_RDONLY)
    try:
        return _digest(token) in _entries(fd, path)
    finally:
        os.close(fd)


def spend(token: str, act: Callable[[], T]) -> T:
    """Run ``act`` (the decision) with the token unspent, and spend it if ``act`` succeeds.

    LinkUsed when it was spent already; whatever ``act`` raises leaves it unspent.
    """
    path = used_path()
    fd = _open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd is closed
        entries = _entries(fd, path)
        digest = _digest(token)
        if digest in entries:
            raise LinkUsed
        done = act()
        now = time.time()
        entries = {d: e for d, e in entries.items() if e > now}
        entries[digest] = expiry_of(token) or int(now)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        write_all(fd, "".join(f"{e} {d}\n" for d, e in entries.items()).encode())
        os.fsync(fd)
        return done
    finally:
        os.close(fd)
