"""The ``--out`` folder: what the bench is, one JSON line per item and arm, the sessions.

Lines are appended as each item's arm finishes, so Ctrl+C loses at most the
items in flight; a rerun with the same folder reads them back and asks only for
what is missing. A folder holding another bench (task, model, seed or sizes)
is refused rather than mixed.

Each line is bound to its run: ``bench.json`` holds a random run id beside the
settings, and every line carries that ``run``, the ``prev`` hash it follows (the
first follows ``bench.json``'s) and its own ``hash`` (:func:`tui.engine.record.chain.link`
over the line's other fields). On load, an edited, removed, moved or foreign line
is refused by line number before anything is written, and each line's content is
rechecked by the caller's ``check``. Text after the last newline is a write cut
short: it is dropped and the item runs again.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from tui.engine.basics.errors import MootInputError
from tui.engine.basics.safeio import FileRefused, read_regular
from tui.engine.record.chain import link

CONFIG = "bench.json"
LINES = "items.jsonl"
SESSIONS = "sessions"
PLOT = "plot.svg"
MAX_LINES_BYTES = 512 * 1024 * 1024
RUN = "run"
PREV = "prev"
HASH = "hash"
CHAINED = (RUN, PREV, HASH)  # the fields binding a line, not the record's
_RUN_ID = re.compile(r"[0-9a-f]{1,64}")
UNBOUND = (
    f"written before moot bound each line of {LINES} to its run, so its lines cannot be "
    "checked; start a new --out folder"
)

Check = Callable[[dict[str, Any]], str | None]  # what is wrong with a record read back, if anything


def session_path(folder: Path, item: int, arm: str = "debate") -> Path:
    """Where item ``item``'s session of ``arm`` (``debate`` or ``adaptive``) is kept."""
    suffix = "" if arm == "debate" else f"-{arm}"
    return folder / SESSIONS / f"item-{item:05d}{suffix}.toml"


class Store:
    """One bench's folder; ``add`` appends a finished record, chained, and flushes it."""

    def __init__(self, folder: Path, config: dict[str, Any], check: Check) -> None:
        self.folder = folder
        try:
            (folder / SESSIONS).mkdir(parents=True, exist_ok=True)
            header = self._header(config)
        except OSError as err:
            raise MootInputError(
                str(folder), [f"cannot use --out: {err.strerror or err}"]
            ) from None
        self.run = str(header[RUN])
        self._last = link("", header)
        self._whole = 0  # bytes of items.jsonl up to its last newline
        self.done = self._read_lines(check)
        self._file: IO[str] | None = None

    def _header(self, config: dict[str, Any]) -> dict[str, Any]:
        path = self.folder / CONFIG
        if not path.exists():
            header = {**config, RUN: secrets.token_hex(8)}
            path.write_text(json.dumps(header, indent=2) + "\n", "utf-8")
            return header
        try:
            held = json.loads(read_regular(path, 64 * 1024))
        except (FileRefused, ValueError) as err:
            raise MootInputError(str(path), [f"not a bench's {CONFIG}: {err}"]) from None
        if not isinstance(held, dict):
            raise MootInputError(str(path), [f"not a bench's {CONFIG}: not a JSON object"])
        differ = sorted(k for k in config if held.get(k) != config[k])
        if differ:
            shown = ", ".join(f"{k} {held.get(k)!r} (now {config[k]!r})" for k in differ)
            raise MootInputError(
                str(self.folder), [f"holds another bench: {shown}; use a new --out folder"]
            )
        if not isinstance(held.get(RUN), str):
            raise MootInputError(str(path), [UNBOUND])
        return held

    def _read_lines(self, check: Check) -> dict[tuple[int, str], dict[str, Any]]:
        path = self.folder / LINES
        if not path.exists():
            return {}
        try:
            data = read_regular(path, MAX_LINES_BYTES)
        except FileRefused as err:
            raise MootInputError(str(path), [str(err)]) from None
        self._whole = data.rfind(b"\n") + 1  # after it: a line cut by a crash, run again
        done: dict[tuple[int, str], dict[str, Any]] = {}
        first_on: dict[tuple[int, str], int] = {}
        lines = data[: self._whole - 1].split(b"\n") if self._whole else []
        for number, raw in enumerate(lines, start=1):
            line = {k: v for k, v in self._chained(raw, number).items() if k not in CHAINED}
            problem = check(line)
            key = (line["item"], line["arm"])
            if problem is None and key in first_on:
                problem = f"item {key[0]} {key[1]} again (first on line {first_on[key]})"
            if problem is not None:
                raise MootInputError(str(path), [f"line {number}: {problem}"])
            first_on[key] = number
            done[key] = line
        return done

    def _chained(self, raw: bytes, number: int) -> dict[str, Any]:
        """The line as a record, if it is this run's next line and unedited."""
        path = str(self.folder / LINES)
        try:
            line = json.loads(raw.decode("utf-8"))
        except ValueError:
            line = None
        if not isinstance(line, dict):
            raise MootInputError(path, [f"line {number}: not a JSON object"])
        run = line.get(RUN)
        if run is None and HASH not in line:
            raise MootInputError(path, [f"line {number}: {UNBOUND}"])
        if run != self.run:
            shown = f" ({run})" if isinstance(run, str) and _RUN_ID.fullmatch(run) else ""
            raise MootInputError(path, [f"line {number}: from another bench run{shown}"])
        if line.get(PREV) != self._last:
            after = f"line {number - 1}" if number > 1 else CONFIG
            raise MootInputError(
                path,
                [f"line {number}: does not follow {after} (a line was removed, moved or added)"],
            )
        if line.get(HASH) != link(self._last, line):
            raise MootInputError(
                path, [f"line {number}: edited after it was written (its hash does not hold)"]
            )
        self._last = line[HASH]
        return line

    def session(self, item: int, arm: str) -> Path:
        return session_path(self.folder, item, arm)

    def add(self, record: dict[str, Any]) -> None:
        if self._file is None:
            path = self.folder / LINES
            if path.exists() and path.stat().st_size > self._whole:
                os.truncate(path, self._whole)  # the cut line read past on load
            self._file = path.open("a", encoding="utf-8")
        line = {**record, RUN: self.run, PREV: self._last}
        line[HASH] = self._last = link(self._last, line)
        self._file.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._file.flush()
        self.done[(record["item"], record["arm"])] = record

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
