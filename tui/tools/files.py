"""The built-in ``files`` tool: read-only ``list``, ``read`` and ``grep`` inside one root.

A model names the paths, so every path is resolved with its symlinks followed
and refused unless the real file lies under the root (``ReadRoots``); only
regular files are read, never a FIFO or a device, and never past a size bound.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from tui.engine.basics.safeio import FileRefused, read_regular
from tui.engine.core.ports import ToolFailure
from tui.engine.grounding.lookups import FILES_CALLS as CALLS
from tui.engine.grounding.readroots import ReadRoots

MAX_FILE_BYTES = 4 * 1024 * 1024  # a larger file is refused, not read
MAX_LISTED = 1_000
MAX_MATCHES = 200
MAX_GREP_FILES = 5_000


class FilesTool:
    """One root, read-only; each call's path is relative to it."""

    def __init__(self, root: Path) -> None:
        self.root = ReadRoots.of(root)

    def run(self, call: str, args: dict[str, Any]) -> str:
        if call == "list":
            return self._list(self._folder(args.get("path", ".")))
        if call == "read":
            return self._read(args)
        if call == "grep":
            return self._grep(args)
        raise ToolFailure(f"no call {call!r}; the files tool has {', '.join(CALLS)}")

    def _inside(self, path: Any) -> Path:
        """The real path for a relative ``path`` under the root; ToolFailure otherwise."""
        if not isinstance(path, str) or not path:
            raise ToolFailure("path must be a non-empty relative path")
        if os.path.isabs(path):
            raise ToolFailure(f"{path!r} is absolute; paths are relative to the tool's root")
        try:
            return self.root.resolve(self.root.spec_folder / path)
        except FileRefused:
            raise ToolFailure(
                f"{path!r} leads outside the tool's root, so it is not read"
            ) from None

    def _folder(self, path: Any) -> Path:
        folder = self._inside(path)
        if not folder.is_dir():
            raise ToolFailure(f"{path!r} is not a folder")
        return folder

    def _shown(self, path: Path) -> str:
        return path.relative_to(self.root.spec_folder).as_posix() or "."

    def _list(self, folder: Path) -> str:
        lines = []
        for entry in sorted(os.scandir(folder), key=lambda e: e.name)[:MAX_LISTED]:
            try:
                real = self._inside(self._shown(folder / entry.name))
            except ToolFailure:
                continue  # a symlink out of the root is not shown
            mode = real.stat().st_mode
            if stat.S_ISDIR(mode):
                lines.append(entry.name + "/")
            elif stat.S_ISREG(mode):
                lines.append(f"{entry.name} ({real.stat().st_size} bytes)")
        return "\n".join(lines) or "(empty folder)"

    def _text(self, path: Path) -> str:
        try:
            data = read_regular(path, MAX_FILE_BYTES)
        except FileRefused as err:
            raise ToolFailure(f"{self._shown(path)}: {err}") from None
        return data.decode("utf-8", errors="replace")

    def _read(self, args: dict[str, Any]) -> str:
        text = self._text(self._inside(args.get("path")))
        start, end = args.get("start_line"), args.get("end_line")
        if start is None and end is None:
            return text
        lines = text.splitlines(keepends=True)
        first = start if isinstance(start, int) and start > 0 else 1
        last = end if isinstance(end, int) and end >= first else len(lines)
        return "".join(lines[first - 1 : last])

    def _grep(self, args: dict[str, Any]) -> str:
        """Lines holding ``pattern`` (literal, case-insensitive), as path:line: text."""
        pattern = args.get("pattern")
        if not isinstance(pattern, str) or not pattern.strip():
            raise ToolFailure("grep needs a non-empty pattern (literal text)")
        needle = pattern.casefold()
        start = self._inside(args.get("path", "."))
        files = [start] if start.is_file() else self._walk(start)
        hits: list[str] = []
        for path in files:
            try:
                text = self._text(path)
            except ToolFailure:
                continue  # not a regular file, or too large: grep skips it
            for n, line in enumerate(text.splitlines(), start=1):
                if needle in line.casefold():
                    hits.append(f"{self._shown(path)}:{n}: {line}")
                    if len(hits) >= MAX_MATCHES:
                        return "\n".join([*hits, f"(stopped at {MAX_MATCHES} matches)"])
        return "\n".join(hits) or f"no line holds {pattern!r}"

    def _walk(self, folder: Path) -> list[Path]:
        found: list[Path] = []
        for here, dirs, names in os.walk(folder):  # symlinked folders are not entered
            dirs.sort()
            for name in sorted(names):
                path = Path(here) / name
                if path.is_symlink() or len(found) >= MAX_GREP_FILES:
                    continue
                found.append(path)
        return found
