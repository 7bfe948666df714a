"""``moot watch``: follow a session another process is writing, read-only and live.

A watcher holds no lock and never writes: it tails the file by size, keeps any
bytes after the last commit marker for the next look, and parses only complete
committed records, each on its own (every record the writer appends is a
standalone TOML chunk). When the writer rewrites the file (a ``[result]`` set
or cleared), the name points at a new file: the watcher reads it from the start
and shows only what it has not shown yet. Any number of watchers can follow
one session; the writer does not know they are there.

A writer killed mid-run (``kill -9``) never writes its result, so while nothing
new arrives the watcher tests the writer's lock, at most once a second: once
the lock is gone and a last look finds no result, nothing more can come, and
the watch ends saying so.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError
from rich.console import Console
from rich.text import Text

from tui.commands.headless import headless_console, report_table, turn_text
from tui.engine.basics.bounded import SESSION_BYTES, TomlRefused, toml_document
from tui.engine.basics.errors import SessionError
from tui.engine.basics.vocab import DEFAULT_PROTOCOL, ESCALATE
from tui.engine.core.records import Turn
from tui.engine.record.chain import HASH, SIGNATURE
from tui.engine.record.fileformat import COMMIT, SCHEMA
from tui.engine.record.session import held
from tui.engine.record.signing import SIGNER
from tui.exitcodes import ExitCode
from tui.render.textsafe import clean_line

POLL_S = 0.1
HEADER_WAIT_S = 5.0  # a new session's first record lands at once; a spec never gets one
LOCK_LOOK_S = 1.0  # a probe takes the free lock for an instant: a resume starting then would fail
_MARK = COMMIT.encode()
_TURN = TypeAdapter(Turn)
Kind = Literal["header", "turn", "action", "result"]


class WriterStopped(Exception):
    """No process holds the session's lock, and it ends without a ``[result]``."""


@dataclass(frozen=True)
class Seen:
    """One committed record the watcher has not shown before."""

    kind: Kind
    body: dict[str, Any]
    turn: Turn | None = None


@dataclass
class Follower:
    """Reads what a writer has committed to ``path`` since the last ``poll()``."""

    path: Path
    header: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    turns_shown: int = 0
    actions_shown: int = 0
    _offset: int = 0
    _identity: tuple[int, int] | None = None
    _pending: bytes = b""
    _actions_this_pass: int = 0
    problems: list[str] = field(default_factory=list)

    def poll(self) -> list[Seen]:
        """New complete records, oldest first; [] when nothing was committed since."""
        data = self._read_new()
        if data is None:
            return []
        buf = self._pending + data
        pieces = buf.split(_MARK)
        self._pending = pieces.pop()  # after the last marker: not committed yet
        seen: list[Seen] = []
        for piece in pieces:
            record = self._record(piece + _MARK)
            if record is not None:
                seen.append(record)
        return seen

    def _read_new(self) -> bytes | None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            if self._identity is None:
                raise SessionError(str(self.path), ["file not found"]) from None
            return None  # between a rewrite's steps: look again next time
        except OSError as err:
            raise SessionError(str(self.path), [f"cannot read: {err.strerror}"]) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise SessionError(str(self.path), ["not a regular file"])
            if info.st_size > SESSION_BYTES:
                raise SessionError(
                    str(self.path), [f"larger than the size limit of {SESSION_BYTES:,} bytes"]
                )
            identity = (info.st_dev, info.st_ino)
            if identity != self._identity or info.st_size < self._offset:
                # Rewritten through a new file (or cut back): read it again from the start.
                self._identity, self._offset, self._pending = identity, 0, b""
                self._actions_this_pass = 0
            if info.st_size == self._offset:
                return None
            chunks: list[bytes] = []
            while self._offset < info.st_size:
                chunk = os.pread(fd, info.st_size - self._offset, self._offset)
                if not chunk:
                    break
                chunks.append(chunk)
                self._offset += len(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _record(self, piece: bytes) -> Seen | None:
        try:
            doc = toml_document(piece)
        except TomlRefused as err:
            self.problems.append(f"a record that does not parse was skipped: {err}")
            return None
        if "schema" in doc:
            if self.header is not None:
                return None
            if doc.get("schema") != SCHEMA:
                raise SessionError(str(self.path), ["not a moot session file"])
            self.header = doc
            return Seen("header", doc)
        turns = doc.get("turns")
        if isinstance(turns, list) and turns and isinstance(turns[0], dict):
            return self._turn(turns[0])
        actions = doc.get("operator_actions")
        if isinstance(actions, list) and actions and isinstance(actions[0], dict):
            self._actions_this_pass += 1
            if self._actions_this_pass <= self.actions_shown:
                return None
            self.actions_shown = self._actions_this_pass
            return Seen("action", _unhashed(actions[0]))
        result = doc.get("result")
        if isinstance(result, dict):
            body = _unhashed(result)
            if body == self.result:
                return None
            self.result = body
            return Seen("result", body)
        return None

    def _turn(self, body: dict[str, Any]) -> Seen | None:
        try:
            turn = _TURN.validate_python(body)
        except ValidationError:
            self.problems.append("a turn record that does not validate was skipped")
            return None
        if turn.index <= self.turns_shown:
            return None  # shown before the file was rewritten
        self.turns_shown = turn.index
        return Seen("turn", _unhashed(body), turn)


def _unhashed(body: dict[str, Any]) -> dict[str, Any]:
    """A record's own fields: its hash, signature and signer are about the record."""
    return {k: v for k, v in body.items() if k not in (HASH, SIGNATURE, SIGNER)}


def _show(console: Console, seen: Seen) -> None:
    if seen.kind == "header":
        debate = seen.body.get("spec", {}).get("debate", {})
        console.print(
            Text(f"watching: {clean_line(debate.get('title', ''))}", style="bold")
            + Text(
                f"  ({clean_line(debate.get('protocol', DEFAULT_PROTOCOL))}, read-only)",
                style="dim",
            ),
            soft_wrap=True,
        )
    elif seen.kind == "turn" and seen.turn is not None:
        console.print(turn_text(seen.turn))
    elif seen.kind == "action":
        a = seen.body
        detail = a.get("vote") or a.get("text") or a.get("model") or a.get("rationale") or ""
        console.print(
            Text(f"operator: {clean_line(a.get('action', '?'))} ", style="cyan")
            + Text(clean_line(detail)),
            soft_wrap=True,
        )
    elif seen.kind == "result":
        style = "bold yellow" if seen.body.get("decision") == ESCALATE else "bold green"
        console.print(
            Text(
                f"\ndecision: {clean_line(seen.body.get('decision'))}  "
                f"({clean_line(seen.body.get('decision_rule'))}, "
                f"by {clean_line(seen.body.get('decided_by'))})",
                style,
            )
        )
        console.print(report_table(seen.body))


def follow(
    path: str | Path,
    on_record: Callable[[Seen], None],
    *,
    interval: float = POLL_S,
    header_wait: float = HEADER_WAIT_S,
) -> dict[str, Any]:
    """Poll ``path`` until a ``[result]`` is committed; returns that result.

    WriterStopped when the writer's lock is gone and the file ends without one.
    """
    follower = Follower(Path(path))
    started = last_look = time.monotonic()
    writer_gone = False
    while True:
        news = follower.poll()
        for seen in news:
            on_record(seen)
            if seen.kind == "result":
                return seen.body
        if writer_gone:  # this last look came after the lock was let go: nothing more comes
            raise WriterStopped(str(path))
        now = time.monotonic()
        if follower.header is None:
            if now - started > header_wait:
                raise SessionError(str(path), ["no complete record: not a moot session file"])
        elif news:
            last_look = now
        elif now - last_look >= LOCK_LOOK_S:
            last_look = now
            writer_gone = not held(path)
            if writer_gone:
                continue  # records committed before the lock went are on disk: read them
        time.sleep(interval)


def watch(path: str | Path, console: Console | None = None, *, interval: float = POLL_S) -> int:
    """``moot watch``: print each record as it commits; the run's exit code at its end."""
    console = console or headless_console()  # never wrapped: no wrap starts a line of model text
    try:
        result = follow(path, lambda seen: _show(console, seen), interval=interval)
    except KeyboardInterrupt:
        console.print(Text("stopped watching; the session goes on", style="dim"))
        return ExitCode.INTERRUPTED
    except WriterStopped:
        console.print(
            Text(
                "\nthe writer stopped before a result: no process holds the session and "
                f"nothing more was committed; `moot resume {clean_line(path)}` continues it",
                style="yellow",
            ),
            soft_wrap=True,
        )
        return ExitCode.INTERRUPTED
    return ExitCode.UNRESOLVED if result.get("decision") == ESCALATE else ExitCode.DECIDED
