"""The ``--out`` folder: what the bench is, one JSON line per item and arm, the sessions.

Lines are appended as each item's arm finishes, so Ctrl+C loses at most the
items in flight; a rerun with the same folder reads them back and asks only for
what is missing. A folder holding another bench (task, model, seed or sizes)
is refused rather than mixed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from tui.engine.errors import MootInputError
from tui.engine.safeio import FileRefused, read_regular

CONFIG = "bench.json"
LINES = "items.jsonl"
SESSIONS = "sessions"
PLOT = "plot.svg"
MAX_LINES_BYTES = 512 * 1024 * 1024


class Store:
    """One bench's folder; ``add`` appends a finished record and flushes it."""

    def __init__(self, folder: Path, config: dict[str, Any]) -> None:
        self.folder = folder
        try:
            (folder / SESSIONS).mkdir(parents=True, exist_ok=True)
            self._check_config(config)
        except OSError as err:
            raise MootInputError(
                str(folder), [f"cannot use --out: {err.strerror or err}"]
            ) from None
        self.done = self._read_lines()
        self._file: IO[str] | None = None

    def _check_config(self, config: dict[str, Any]) -> None:
        path = self.folder / CONFIG
        if not path.exists():
            path.write_text(json.dumps(config, indent=2) + "\n", "utf-8")
            return
        try:
            held = json.loads(read_regular(path, 64 * 1024))
        except (FileRefused, ValueError) as err:
            raise MootInputError(str(path), [f"not a bench's {CONFIG}: {err}"]) from None
        differ = sorted(k for k in config if held.get(k) != config[k])
        if differ:
            shown = ", ".join(f"{k} {held.get(k)!r} (now {config[k]!r})" for k in differ)
            raise MootInputError(
                str(self.folder), [f"holds another bench: {shown}; use a new --out folder"]
            )

    def _read_lines(self) -> dict[tuple[int, str], dict[str, Any]]:
        path = self.folder / LINES
        if not path.exists():
            return {}
        try:
            text = read_regular(path, MAX_LINES_BYTES).decode("utf-8", "replace")
        except FileRefused as err:
            raise MootInputError(str(path), [str(err)]) from None
        done: dict[tuple[int, str], dict[str, Any]] = {}
        for line in text.splitlines():
            try:  # a line cut by a crash is an item to run again
                record = json.loads(line)
                done[(int(record["item"]), str(record["arm"]))] = record
            except (ValueError, KeyError, TypeError):
                continue
        return done

    def session(self, item: int) -> Path:
        return self.folder / SESSIONS / f"item-{item:05d}.toml"

    def add(self, record: dict[str, Any]) -> None:
        if self._file is None:
            self._file = (self.folder / LINES).open("a", encoding="utf-8")
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()
        self.done[(record["item"], record["arm"])] = record

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
