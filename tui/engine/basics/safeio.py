"""File access that a hostile path cannot turn against the user.

Reads take only regular files, up to a size limit, so a FIFO or ``/dev/zero``
is refused at once instead of blocking or growing without bound. Writes create
their file exclusively and never follow a symlink (``O_EXCL | O_NOFOLLOW``),
loop until every byte is written, and fsync before they count as done.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

WriteFn = Callable[[int, bytes], int]
_NEW = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_CHUNK = 1 << 20


class FileRefused(Exception):
    """A path that must not be read or written; the message says why, for the user."""


def describe(err: OSError) -> str:
    return err.strerror or type(err).__name__


def read_regular(path: str | Path, limit: int, *, follow: bool = True) -> bytes:
    """The bytes of a regular file no larger than ``limit``; FileRefused otherwise.

    ``follow=False``: a symlink as the last part of the path is refused, not read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileRefused("file not found") from None
    except OSError as err:
        raise FileRefused(f"cannot read: {describe(err)}") from None
    except ValueError:  # os.open refuses a path holding NUL before asking the system
        raise FileRefused("not a path: it holds a NUL character") from None
    try:
        return read_fd(fd, limit)
    finally:
        os.close(fd)


def read_fd(fd: int, limit: int) -> bytes:
    """Read an open regular file from its start, refusing anything past ``limit`` bytes."""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused("not a regular file (a FIFO, device or folder is refused)")
        if info.st_size > limit:
            raise FileRefused(f"larger than the size limit of {limit:,} bytes")
        chunks: list[bytes] = []
        total = 0
        while True:  # the file may grow while it is read: stop just past the limit
            chunk = os.pread(fd, min(_READ_CHUNK, limit + 1 - total), total)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise FileRefused(f"larger than the size limit of {limit:,} bytes")
    except OSError as err:
        raise FileRefused(f"cannot read: {describe(err)}") from None


def write_all(fd: int, data: bytes, write: WriteFn = os.write) -> None:
    """Write every byte, looping on short writes; an OSError says why it stopped."""
    view = memoryview(data)
    done = 0
    while done < len(data):
        n = write(fd, bytes(view[done : done + _READ_CHUNK]))
        if n <= 0:
            raise OSError(errno.EIO, "the write made no progress")
        done += n


def create_new(path: str | Path, mode: int = 0o644) -> int:
    """Open a file that did not exist: never an existing file, never through a symlink."""
    return os.open(path, _NEW, mode)


def temp_beside(target: Path, mode: int = 0o644) -> tuple[int, Path]:
    """A fresh, randomly named temp file in the target's folder (same file system)."""
    for _ in range(16):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
        try:
            return create_new(tmp, mode), tmp
        except FileExistsError:
            continue  # planted or left over: never reused
    raise FileExistsError(errno.EEXIST, "no free temp file name", str(target))


def write_new(path: str | Path, data: bytes, write: WriteFn = os.write) -> None:
    """Write a new file completely or not at all; FileRefused if anything is there."""
    try:
        fd = create_new(path)
    except FileExistsError:
        raise FileRefused("a file (or link) already exists there; not overwriting it") from None
    except OSError as err:
        raise FileRefused(f"cannot write: {describe(err)}") from None
    try:
        write_all(fd, data, write)
        os.fsync(fd)
    except OSError as err:
        os.close(fd)
        os.unlink(path)
        raise FileRefused(f"cannot write: {describe(err)}; nothing was written") from None
    os.close(fd)


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new file durable (best effort: not every system allows it)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def replace_file(path: str | Path, data: bytes) -> None:
    """Write ``path`` whole through a fresh temp file: a link there is replaced, not followed."""
    target = Path(path)
    fd, tmp = temp_beside(target)
    try:
        write_all(fd, data)
        os.fsync(fd)
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)
    fsync_dir(target.parent)
