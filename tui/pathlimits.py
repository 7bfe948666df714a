"""Path arguments the file system would refuse as too long, refused before any command runs.

A name past the file system's limit makes every ``stat`` and ``open`` raise
``ENAMETOOLONG`` (Errno 36), and Python's ``Path.exists`` passes that on: each
command would meet it somewhere different. The parser checks every path
argument once, against the limits of the folder it would live in, and names
the limit (exit 2).
"""

from __future__ import annotations

import argparse
import os

NAME_MAX = 255  # bytes in one name, where the system does not say
PATH_MAX = 4096  # bytes in a whole path, the final NUL included


def _limit(folder: str, name: str, default: int) -> int:
    try:
        return os.pathconf(folder, name)
    except (OSError, ValueError):
        return default


def _nearest_folder(path: str) -> str:
    """The deepest existing folder on the way to ``path`` (``os.path.isdir`` never raises)."""
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    return folder


def too_long(path: str) -> str | None:
    """Why the file system would refuse ``path`` as too long, or None."""
    folder = _nearest_folder(path)
    whole = len(os.fsencode(path))
    path_max = _limit(folder, "PC_PATH_MAX", PATH_MAX)
    if whole >= path_max:
        return f"the path is too long: {whole:,} bytes; the limit is {path_max - 1:,}"
    name_max = _limit(folder, "PC_NAME_MAX", NAME_MAX)
    longest = max((len(os.fsencode(part)) for part in path.split(os.sep)), default=0)
    if longest > name_max:
        return f"a name in the path is too long: {longest:,} bytes; the limit is {name_max:,}"
    return None


def path_arg(text: str) -> str:
    """An ``argparse`` type for every path argument: the text as given, or exit 2 saying why."""
    problem = too_long(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text
