"""Session files: append-only TOML, fsynced after every turn and operator action.

Each record is appended with one ``write`` ending in a commit marker line, so a
process killed mid-write leaves a torn tail that loading detects and drops. The
whole file is rewritten (atomically) only when a ``[result]`` is set or cleared.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from tui import __version__
from tui.engine.errors import SessionError, SessionLockedError, SpecError
from tui.engine.fileformat import COMMIT, SCHEMA
from tui.engine.records import Turn
from tui.engine.spec import Spec, validate_spec

SESSIONS_ENV = "MOOT_SESSIONS_DIR"


_TURN = TypeAdapter(Turn)


class _ActionRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    at: str
    action: str
    after_turn: int


@dataclass
class SessionData:
    """A loaded session file."""

    path: Path
    meta: dict[str, Any]
    spec_raw: dict[str, Any]
    spec: Spec
    turns: list[Turn]
    actions: list[dict[str, Any]]
    result: dict[str, Any] | None
    warnings: list[str] = field(default_factory=list)
    good_length: int = 0  # bytes up to the last commit marker

    @property
    def title(self) -> str:
        return self.spec.debate.title


def sessions_dir(option: str | Path | None = None) -> Path:
    """``--sessions-dir``, else ``$MOOT_SESSIONS_DIR``, else ``./sessions``."""
    if option:
        return Path(option)
    env = os.environ.get(SESSIONS_ENV)
    return Path(env) if env else Path("sessions")


def slugify(title: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return slug[:48].strip("-") or "debate"


def new_session_path(directory: Path, title: str, when: datetime | None = None) -> Path:
    when = when or datetime.now()
    base = f"{when:%Y%m%d-%H%M%S}-{slugify(title)}"
    path = directory / f"{base}.toml"
    n = 2
    while path.exists():
        path = directory / f"{base}-{n}.toml"
        n += 1
    return path


def _chunk(doc: dict[str, Any]) -> str:
    return tomli_w.dumps(doc) + COMMIT


def _table_like(value: Any) -> bool:
    return isinstance(value, dict) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)
    )


def _record_chunk(name: str, record: dict[str, Any]) -> str:
    """One ``[[name]]`` entry, always as a table so later appends extend the array."""
    flat = {k: v for k, v in record.items() if not _table_like(v)}
    nested = {k: v for k, v in record.items() if _table_like(v)}
    text = f"[[{name}]]\n" + tomli_w.dumps(flat)
    if nested:
        text += "\n" + tomli_w.dumps({name: nested})
    return text + COMMIT


def _lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


def load_session(path: str | Path) -> SessionData:
    """Read a session file without changing it; SessionError lists what is wrong."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise SessionError(str(p), ["file not found"]) from None
    except OSError as err:
        raise SessionError(str(p), [f"cannot read: {err.strerror}"]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SessionError(str(p), [f"not UTF-8 text at byte {err.start}"]) from None
    cut = text.rfind(COMMIT)
    if cut == -1:
        raise SessionError(str(p), ["no complete record: not a moot session file"])
    good = text[: cut + len(COMMIT)]
    warnings = []
    tail = text[len(good) :]
    if tail.strip():
        warnings.append(
            f"dropped a torn tail of {len(tail.encode('utf-8'))} bytes (an unfinished write)"
        )
    try:
        doc = tomllib.loads(good)
    except tomllib.TOMLDecodeError as err:
        raise SessionError(str(p), [f"not valid TOML: {err}"]) from None
    problems: list[str] = []
    if doc.get("schema") != SCHEMA:
        problems.append(f"schema: expected {SCHEMA!r}, found {doc.get('schema')!r}")
    meta = doc.get("session", {})
    if not isinstance(meta, dict):
        problems.append("session: must be a table")
        meta = {}
    spec_raw = doc.get("spec")
    spec: Spec | None = None
    if not isinstance(spec_raw, dict):
        problems.append("spec: missing the copy of the debate spec")
        spec_raw = {}
    else:
        try:
            spec = validate_spec(spec_raw, "spec")
        except SpecError as err:
            problems.extend(f"spec.{m}" for m in err.problems)
    turns: list[Turn] = []
    raw_turns = doc.get("turns", [])
    if not isinstance(raw_turns, list):
        problems.append("turns: must be an array of tables")
        raw_turns = []
    for i, rec in enumerate(raw_turns):
        try:
            turn = _TURN.validate_python(rec)
        except ValidationError as err:
            for e in err.errors():
                loc = ".".join(str(x) for x in e["loc"])
                problems.append(f"turns[{i}].{loc}: {e['msg']}")
            continue
        if turn.index != i:
            problems.append(f"turns[{i}].index: expected {i}, found {turn.index}")
        if spec is not None and turn.speaker not in spec.ids:
            problems.append(f"turns[{i}].speaker: {turn.speaker!r} is not a debater")
        turns.append(turn)
    actions: list[dict[str, Any]] = []
    raw_actions = doc.get("operator_actions", [])
    for i, rec in enumerate(raw_actions if isinstance(raw_actions, list) else []):
        try:
            actions.append(_ActionRecord.model_validate(rec).model_dump())
        except ValidationError as err:
            for e in err.errors():
                loc = ".".join(str(x) for x in e["loc"])
                problems.append(f"operator_actions[{i}].{loc}: {e['msg']}")
    result = doc.get("result")
    if result is not None and not isinstance(result, dict):
        problems.append("result: must be a table")
        result = None
    if problems or spec is None:
        raise SessionError(str(p), problems)
    return SessionData(
        path=p,
        meta=meta,
        spec_raw=spec_raw,
        spec=spec,
        turns=turns,
        actions=actions,
        result=result,
        warnings=warnings,
        good_length=len(good.encode("utf-8")),
    )


class SessionStore:
    """Owns one session file while a debate runs: lock, appends, final rewrite."""

    def __init__(self, path: Path, header: dict[str, Any], lock_fd: int) -> None:
        self.path = path
        self._header = header
        self._lock_fd = lock_fd
        self._turns: list[dict[str, Any]] = []
        self._actions: list[dict[str, Any]] = []
        self._result: dict[str, Any] | None = None
        self._fd: int | None = None

    # ---------------------------------------------------------------- opening
    @staticmethod
    def _lock(path: Path) -> int:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(_lock_path(path), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionLockedError(
                str(path), ["another moot process is running this session"]
            ) from None
        return fd

    @classmethod
    def create(
        cls, path: str | Path, spec_raw: dict[str, Any], spec_source: str | None = None
    ) -> SessionStore:
        """Start a new session file holding the spec; refuses to replace a file."""
        p = Path(path)
        lock_fd = cls._lock(p)
        header: dict[str, Any] = {
            "schema": SCHEMA,
            "session": {
                "id": p.stem,
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
                "moot_version": __version__,
            },
            "spec": spec_raw,
        }
        if spec_source:
            header["session"]["spec_source"] = spec_source
        store = cls(p, header, lock_fd)
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        except FileExistsError:
            store.close()
            raise SessionError(
                str(p), ["a file already exists there; not overwriting it"]
            ) from None
        store._fd = fd
        store._write(_chunk(header))
        _fsync_dir(p.parent)
        return store

    @classmethod
    def open_existing(cls, path: str | Path) -> tuple[SessionStore, SessionData]:
        """Lock and load a session to continue it; a torn tail is backed up and dropped."""
        p = Path(path)
        lock_fd = cls._lock(p)
        try:
            data = load_session(p)
        except BaseException:
            os.close(lock_fd)
            raise
        header = {"schema": SCHEMA, "session": data.meta, "spec": data.spec_raw}
        store = cls(p, header, lock_fd)
        store._turns = [t.to_record() for t in data.turns]
        store._actions = [dict(a) for a in data.actions]
        store._result = data.result
        if data.warnings:
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            backup = p.with_name(f"{p.name}.torn-{stamp}.bak")
            n = 2
            while backup.exists():  # never replace an earlier backup
                backup = p.with_name(f"{p.name}.torn-{stamp}-{n}.bak")
                n += 1
            shutil.copyfile(p, backup)
            with open(p, "r+b") as fh:
                fh.truncate(data.good_length)
                fh.flush()
                os.fsync(fh.fileno())
            data.warnings.append(f"the original file was kept as {backup.name}")
        store._fd = os.open(p, os.O_WRONLY | os.O_APPEND)
        return store, data

    # ---------------------------------------------------------------- writing
    def _write(self, text: str) -> None:
        assert self._fd is not None, "session store is closed"
        os.write(self._fd, text.encode("utf-8"))
        os.fsync(self._fd)

    def append_turn(self, turn: Turn) -> None:
        record = turn.to_record()
        self._turns.append(record)
        self._append_or_rewrite(_record_chunk("turns", record))

    def append_action(self, action: dict[str, Any]) -> None:
        self._actions.append(dict(action))
        self._append_or_rewrite(_record_chunk("operator_actions", dict(action)))

    def _append_or_rewrite(self, chunk: str) -> None:
        # After a [result], records must stay before it: rewrite (rare: post-end actions).
        if self._result is not None:
            self._rewrite()
        else:
            self._write(chunk)

    def clear_result(self) -> None:
        """The debate goes on (the operator added a round): the old result no longer holds."""
        if self._result is not None:
            self._result = None
            self._rewrite()

    def set_result(self, result: dict[str, Any]) -> None:
        """Record the ``[result]``: the one write whose cost grows with the transcript."""
        self._result = _toml_safe(result)
        self._rewrite()

    @property
    def result(self) -> dict[str, Any] | None:
        return self._result

    def _rewrite(self) -> None:
        parts = [_chunk(self._header)]
        parts += [_record_chunk("turns", t) for t in self._turns]
        parts += [_record_chunk("operator_actions", a) for a in self._actions]
        if self._result is not None:
            parts.append(_chunk({"result": self._result}))
        tmp = self.path.with_name(f".{self.path.name}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("".join(parts))
            fh.flush()
            os.fsync(fh.fileno())
        if self._fd is not None:
            os.close(self._fd)
        os.replace(tmp, self.path)
        _fsync_dir(self.path.parent)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock_fd >= 0:
            # The lock file stays: unlinking it would let a waiting process lock a
            # fresh inode while another still holds the old one.
            os.close(self._lock_fd)
            self._lock_fd = -1


def _toml_safe(value: Any) -> Any:
    """Drop None (TOML has no null) all the way down."""
    if isinstance(value, dict):
        return {str(k): _toml_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_toml_safe(v) for v in value if v is not None]
    return value


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
