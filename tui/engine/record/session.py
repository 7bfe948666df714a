"""Session files: append-only TOML, fsynced after every turn and operator action.

A turn's fsync runs on a thread (:mod:`tui.engine.record.durable`) while its write stays on
the event loop, in order; the engine tells of the turn only once ``durable`` returns.

Each record is appended in full (short writes are retried) ending in a commit
marker line, so a process killed mid-write leaves a torn tail that loading
detects and drops; a write that fails (disk full, I/O error) is undone and
stops the run with a message. The whole file is rewritten (through a fresh
temp file, never through a symlink) only when a ``[result]`` is set or cleared.
Every record carries a hash chained to the one before it (:mod:`tui.engine.record.chain`),
so an edited or forged record shows on load, and a signature of that hash by the
user's key (:mod:`tui.engine.record.signing`), so a recomputed chain shows too; resuming
refuses such a file.
The lock is held on the session file itself, so every path to the same file
(symlink, hard link) meets the same lock.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from tui import __version__
from tui.engine.basics.bounded import SESSION_BYTES, TomlRefused, toml_document
from tui.engine.basics.errors import (
    MootInputError,
    SessionError,
    SessionExistsError,
    SessionFullError,
    SessionLockedError,
    SpecError,
)
from tui.engine.basics.redact import Redactor
from tui.engine.basics.safeio import (
    FileRefused,
    WriteFn,
    create_new,
    describe,
    fsync_dir,
    read_fd,
    read_regular,
    temp_beside,
    write_all,
    write_new,
)
from tui.engine.basics.vocab import DecisionRule, TurnKind
from tui.engine.core.records import Turn
from tui.engine.grounding.context import Document
from tui.engine.protocols import kind_owner
from tui.engine.record.chain import HASH, SIGNATURE, Break, Record, breaks, in_order, sealed, tail
from tui.engine.record.durable import Durability
from tui.engine.record.fileformat import COMMIT, SCHEMA
from tui.engine.record.keys import user_signer
from tui.engine.record.saw import compact_record, expand_records
from tui.engine.record.signing import SIGNER, SignatureCheck, Signer, current_signer
from tui.engine.record.signing import check as check_signatures
from tui.engine.record.upgrade import upgrade_session
from tui.engine.specs.spec import Spec, validate_spec

SESSIONS_ENV = "MOOT_SESSIONS_DIR"
_NOT_FIELDS = (HASH, SIGNATURE, SIGNER)  # about the record, not a field of the action or result
# Kept free for the [result] (its schedule names every turn's speaker) and a last action,
# so a session that stops because it is full can still be decided and read back.
RESULT_ROOM = 256_000
RESULT_ROOM_PER_TURN = 512


def record_room(turns: int) -> int:
    """Bytes a session holding ``turns`` turns may fill with its records before the next one:
    the reader's limit less the room kept for the result (``moot verify`` asks it too)."""
    return SESSION_BYTES - RESULT_ROOM - RESULT_ROOM_PER_TURN * (turns + 1)


_TURN = TypeAdapter(Turn)
_SHARED_KINDS = frozenset(TurnKind)  # a kind beyond these is one a protocol adds


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
    outcomes: list[dict[str, Any]] = field(default_factory=list)  # after the result, oldest first
    good_length: int = 0  # bytes up to the last commit marker
    upgraded_from: str | None = None  # the moot version whose file was renumbered on load
    records: list[Record] = field(default_factory=list)  # as stored, hashes included
    chain: list[Break] = field(default_factory=list)  # where the hash chain breaks
    signatures: SignatureCheck = field(default_factory=SignatureCheck)  # who signed what
    markers: int = 0  # commit marker lines before good_length
    torn: bool = False  # an unfinished write was dropped after good_length

    @property
    def title(self) -> str:
        return self.spec.debate.title

    @property
    def changed(self) -> str | None:
        """Why the file reads as changed since it was written (chain or signature), or None."""
        if self.chain:
            return f"its hash chain is broken at {self.chain[0]}"
        if self.signatures.problems:
            where, why = self.signatures.problems[0]
            return f"a signature does not hold at {where} ({why})"
        return None


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
    while os.path.lexists(path):  # a dangling link (planted, say) is taken: pass it by
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


_BOM = b"\xef\xbb\xbf"
_NOT_REGULAR = "not a regular file (a FIFO, device or folder is refused)"
# The result is written atomically, by replacing the file: another hard link would keep
# the old content (no result), so such a file is refused rather than written in place.
_HARD_LINKED = (
    "the file has {n} names (hard links); moot writes the result by replacing the file, "
    "which would leave the other names without it: continue a copy (cp), or remove the "
    "other links"
)
_MARK = COMMIT.rstrip("\n").encode()
_SURROGATE = re.compile("[\ud800-\udfff]")
_MARK_LINE = re.compile(rb"^" + re.escape(_MARK) + rb"\r*$", re.M)
_RECORD_HEAD = re.compile(r"^\[\[?\s*([\w.]+)\s*\]\]?", re.M)
_RECORD_INDEX = re.compile(r"^index\s*=\s*(\d{1,9})", re.M)
# A table header in a turn's chunk that is not the turn's own: that chunk is not copied.
_FOREIGN_HEADER = re.compile(r"^\[(?!\[turns\]\]$|turns\.|\[turns\.)", re.M)


def _encode(text: str) -> bytes:
    """UTF-8 for the file; a lone surrogate (undecodable model output) becomes U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _stored_turn_chunks(committed: bytes, count: int) -> list[str | None]:
    """Each turn's text as the file holds it, for the result's rewrite to copy instead of
    serialising 10,000 turns again; all None (serialised) unless each of the ``count``
    turns is a chunk of its own, between LF commit markers, holding only its own tables."""
    try:
        text = committed.decode("utf-8")
    except UnicodeDecodeError:
        return [None] * count
    chunks = [c + COMMIT for c in text.split(COMMIT)[:-1] if c.startswith("[[turns]]\n")]
    if len(chunks) != count or any(_FOREIGN_HEADER.search(c) for c in chunks):
        return [None] * count
    return list(chunks)


def _committed_length(data: bytes) -> int:
    """Bytes up to the end of the last commit marker line (LF or CRLF); 0 if none."""
    end = len(data)
    while (at := data.rfind(_MARK, 0, end)) != -1:
        line_start = at == 0 or data[at - 1 : at] == b"\n" or data[:at] == _BOM
        after = data[at + len(_MARK) : at + len(_MARK) + 2]
        if line_start and after[:1] == b"\n":
            return at + len(_MARK) + 1
        if line_start and after == b"\r\n":
            return at + len(_MARK) + 2
        end = at
    return 0


def _marker_count(data: bytes) -> int:
    """Commit marker lines (LF or CRLF) in the committed part of a file."""
    return len(_MARK_LINE.findall(data))


def _chain_warning(p: Path, found: list[Break]) -> str:
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (
        f"the hash chain is broken at {found[0]}{more}; the file was changed after it was "
        f"written: `moot verify {p}` lists every claim that does not hold"
    )


def _signature_warning(p: Path, found: SignatureCheck) -> str:
    where, why = found.problems[0]
    more = f" (and {len(found.problems) - 1} more)" if len(found.problems) > 1 else ""
    return (
        f"a signature does not hold at {where}: {why}{more}; the file was changed after it "
        f"was signed: `moot verify {p}` lists every claim that does not hold"
    )


def _torn_warning(tail: bytes) -> str:
    """Name what an unfinished write left behind, so the user knows what was dropped."""
    text = tail.decode("utf-8", "replace")
    head = _RECORD_HEAD.search(text)
    what = f"an unfinished [{head.group(1)}] record" if head else "an unfinished record"
    if index := _RECORD_INDEX.search(text):
        what += f" (index {index.group(1)})"
    return (
        f"dropped a torn tail of {len(tail):,} bytes after the last complete record: "
        f"{what}, left by a write that did not finish"
    )


def load_session(path: str | Path, *, gaps_ok: bool = False) -> SessionData:
    """Read a session file without changing it; SessionError lists what is wrong.

    ``gaps_ok``: turns out of sequence (one deleted, say) are read, not refused,
    so ``moot verify`` can name the gap as a claim that does not hold.
    """
    p = Path(path)
    try:
        data = read_regular(p, SESSION_BYTES)
    except FileRefused as err:
        raise SessionError(str(p), [str(err)]) from None
    return _parse(p, data, gaps_ok=gaps_ok)


def _parse(p: Path, data: bytes, *, gaps_ok: bool = False) -> SessionData:
    good = _committed_length(data)
    if good == 0:
        raise SessionError(str(p), ["no complete record: not a moot session file"])
    try:
        doc = toml_document(data[:good])
    except TomlRefused as err:
        raise SessionError(str(p), [str(err)]) from None
    upgraded_from = upgrade_session(doc)
    torn_tail = data[good:]
    torn = bool(torn_tail.strip())
    warnings = [_torn_warning(torn_tail)] if torn else []
    problems: list[str] = []  # every part adds what is wrong with it, so one error lists all
    meta = _meta(doc, problems)
    spec_raw, spec = _spec_copy(doc, problems)
    documents = _documents(doc, problems)
    if spec is not None:
        spec = spec.with_documents(documents)
    raw_turns, turns = _turns(doc, spec, problems, gaps_ok=gaps_ok)
    raw_actions, actions = _actions(doc, problems)
    result = _result(doc, problems)
    raw_outcomes = _outcomes(doc, problems)
    if problems or spec is None:
        raise SessionError(str(p), problems)
    header = {k: v for k, v in doc.items() if k not in _RECORD_ARRAYS}
    records = in_order(header, raw_turns, raw_actions, result, raw_outcomes)
    unchained_ok = upgraded_from is not None or "upgraded_from" in meta
    chain = breaks(records, unchained_ok=unchained_ok)
    if chain:
        warnings.append(_chain_warning(p, chain))
    signatures = check_signatures(records, every=bool(chain))  # a held chain: spans' last
    if signatures.problems:
        warnings.append(_signature_warning(p, signatures))
    return SessionData(
        path=p,
        meta=meta,
        spec_raw=spec_raw,
        spec=spec,
        turns=turns,
        actions=actions,
        result=None
        if result is None
        else {k: v for k, v in result.items() if k not in _NOT_FIELDS},
        warnings=warnings,
        outcomes=[{k: v for k, v in o.items() if k not in _NOT_FIELDS} for o in raw_outcomes],
        good_length=good,
        upgraded_from=upgraded_from,
        records=records,
        chain=chain,
        signatures=signatures,
        markers=_marker_count(data[:good]),
        torn=torn,
    )


def _meta(doc: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    """The ``[session]`` table, after checking the file's schema."""
    if doc.get("schema") != SCHEMA:
        problems.append(f"schema: expected {SCHEMA!r}, found {doc.get('schema')!r}")
    meta = doc.get("session", {})
    if not isinstance(meta, dict):
        problems.append("session: must be a table")
        return {}
    return meta


def _spec_copy(doc: dict[str, Any], problems: list[str]) -> tuple[dict[str, Any], Spec | None]:
    """The stored copy of the spec as written and as validated (None when it does not hold)."""
    spec_raw = doc.get("spec")
    if not isinstance(spec_raw, dict):
        problems.append("spec: missing the copy of the debate spec")
        return {}, None
    try:
        return spec_raw, validate_spec(spec_raw, "spec", key_values=False)
    except SpecError as err:
        problems.extend(f"spec.{m}" for m in err.problems)
        return spec_raw, None


def _documents(doc: dict[str, Any], problems: list[str]) -> list[Document]:
    documents: list[Document] = []
    raw_docs = doc.get("documents", [])
    for i, rec in enumerate(raw_docs if isinstance(raw_docs, list) else [None]):
        try:
            documents.append(Document.from_record(rec))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            problems.append(f"documents[{i}]: not a stored document ({type(err).__name__}: {err})")
    return documents


def _turns(
    doc: dict[str, Any], spec: Spec | None, problems: list[str], *, gaps_ok: bool
) -> tuple[list[Any], list[Turn]]:
    """The stored turn records (kept for their hashes) and the turns they validate to."""
    raw_turns = doc.get("turns", [])
    if not isinstance(raw_turns, list):
        problems.append("turns: must be an array of tables")
        raw_turns = []
    turns: list[Turn] = []
    for i, rec in enumerate(expand_records(raw_turns)):  # the stored records keep their hash
        try:
            turn = _TURN.validate_python(rec)
        except ValidationError as err:
            problems.extend(_field_problems(f"turns[{i}]", err))
            continue
        if turn.index != i + 1 and not gaps_ok:
            problems.append(f"turns[{i}].index: expected {i + 1}, found {turn.index}")
        if spec is not None and turn.speaker not in spec.ids:
            problems.append(f"turns[{i}].speaker: {turn.speaker!r} is not a debater")
        if turn.kind not in _SHARED_KINDS and kind_owner(turn.kind) is None:
            problems.append(
                f"turns[{i}].kind: {turn.kind!r} is not a turn kind moot or an installed"
                " protocol knows"
            )
        turns.append(turn)
    return raw_turns, turns


def _actions(doc: dict[str, Any], problems: list[str]) -> tuple[list[Any], list[dict[str, Any]]]:
    """The stored operator actions and their fields (without the record's hash and signature)."""
    raw_actions = doc.get("operator_actions", [])
    if not isinstance(raw_actions, list):
        problems.append("operator_actions: must be an array of tables")
        raw_actions = []
    actions: list[dict[str, Any]] = []
    for i, rec in enumerate(raw_actions):
        try:
            action = _ActionRecord.model_validate(rec).model_dump()
        except ValidationError as err:
            problems.extend(_field_problems(f"operator_actions[{i}]", err))
            continue
        for key in _NOT_FIELDS:
            action.pop(key, None)
        actions.append(action)
    return raw_actions, actions


def _field_problems(where: str, err: ValidationError) -> list[str]:
    return [f"{where}.{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in err.errors()]


def _result(doc: dict[str, Any], problems: list[str]) -> dict[str, Any] | None:
    result = doc.get("result")
    if result is not None and not isinstance(result, dict):
        problems.append("result: must be a table")
        return None
    return result


def _outcomes(doc: dict[str, Any], problems: list[str]) -> list[dict[str, Any]]:
    """The outcome records; their values are verify's to judge, not the loader's."""
    raw_outcomes = doc.get("outcomes", [])
    if not isinstance(raw_outcomes, list) or not all(isinstance(o, dict) for o in raw_outcomes):
        problems.append("outcomes: must be an array of tables")
        return []
    return raw_outcomes


_RECORD_ARRAYS = ("turns", "operator_actions", "result", "outcomes")


def _user_signer() -> Signer:
    """The user's key; its problems are a SessionError (every front end shows those) naming
    the key file, not the session, which does not exist yet."""
    try:
        return user_signer()
    except MootInputError as err:
        raise SessionError(err.source, err.problems) from None


def _lock(fd: int, shown: Path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SessionLockedError(
            str(shown), ["another moot process is running this session"]
        ) from None


def held(path: str | Path) -> bool:
    """Whether a moot process (this one too) holds the session at ``path`` open to write it.

    A probe of the lock every writer takes: taken and let go at once when free.
    A file the name no longer points at counts as held: a writer rewrote the
    session and holds the new file (it locks it before it takes the name).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        probed = os.fstat(fd)
        now = os.stat(path)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing lets go of a lock taken here
    return (now.st_dev, now.st_ino) != (probed.st_dev, probed.st_ino)


def _open_locked(shown: Path, real: Path) -> int:
    """Open and lock the file at ``real``, making sure the lock is on the file now there.

    A process that rewrites the session locks the new file before it takes the
    name, so whoever locked the old one finds the name moved on and looks again.
    """
    for _ in range(8):
        try:
            fd = os.open(
                real, os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            )
        except FileNotFoundError:
            raise SessionError(str(shown), ["file not found"]) from None
        except IsADirectoryError:
            raise SessionError(str(shown), [_NOT_REGULAR]) from None
        except OSError as err:
            raise SessionError(str(shown), [f"cannot open for writing: {describe(err)}"]) from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise SessionError(str(shown), [_NOT_REGULAR])
        _lock(fd, shown)
        try:
            now = os.stat(real, follow_symlinks=False)
        except OSError:
            now = None
        if now is not None and (now.st_dev, now.st_ino) == (info.st_dev, info.st_ino):
            if info.st_nlink > 1:  # checked once locked: a running session says so first
                os.close(fd)
                raise SessionError(str(shown), [_HARD_LINKED.format(n=info.st_nlink)])
            return fd
        os.close(fd)
    raise SessionLockedError(str(shown), ["another moot process is rewriting this session"])


def _keep_backup(real: Path, data: bytes) -> Path:
    """Copy the file as it was into a new ``.bak`` beside it; never replaces one."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = real.with_name(f"{real.name}.torn-{stamp}.bak")
    n = 2
    while os.path.lexists(backup):  # never replace (or write through) an earlier one
        backup = real.with_name(f"{real.name}.torn-{stamp}-{n}.bak")
        n += 1
    write_new(backup, data)
    return backup


class SessionStore:
    """Owns one session file while a debate runs: lock, appends, final rewrite."""

    write_fn: WriteFn = os.write  # the one place bytes reach the file (tests inject faults)

    def __init__(
        self, path: Path, real: Path, header: dict[str, Any], fd: int, signer: Signer
    ) -> None:
        self.path = path
        self._real = real  # symlinks resolved: the file that is locked and written
        self._header = header
        self._fd: int | None = fd
        self._durable = Durability(0)  # how far the file at ``_fd`` is written and on disk
        self._failed: SessionError | None = None
        self._turns: list[dict[str, Any]] = []
        self._turn_chunks: list[str | None] = []  # each turn's text as written, if known
        self._actions: list[dict[str, Any]] = []
        self._result: dict[str, Any] | None = None
        self._ended: list[Record] = []  # the result and its outcomes, as stored
        # The bytes the file would have held with a record refused for want of room: the
        # engine makes no call it could not record once this is set (TurnSink.full).
        self.full: int | None = None
        self._tail = tail([Record("header", header)])  # the hash the next record chains to
        self._redact = Redactor.for_spec(header.get("spec"))  # the last guard before the disk
        self._signer = signer
        self._declared = current_signer([Record("header", header)])  # who signs, as the file says

    # ---------------------------------------------------------------- opening
    @classmethod
    def create(
        cls,
        path: str | Path,
        spec_raw: dict[str, Any],
        spec_source: str | None = None,
        *,
        documents: tuple[Document, ...] = (),
        forked_from: dict[str, Any] | None = None,
        signer: Signer | None = None,
        spec_folder: str | None = None,
    ) -> SessionStore:
        """Start a new session file holding the spec and its documents; never replaces a file.

        Signed by ``signer``, else by the user's key (made on first use). ``spec_folder``
        (absolute) is where a resume roots the spec's ``[[tools]]`` again.
        """
        p = Path(path)
        signer = signer or _user_signer()  # before anything is written: no key, no file
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            real = Path(os.path.realpath(p.parent)) / p.name
            fd = create_new(real)
        except FileExistsError:
            raise SessionExistsError(
                str(p), ["a file (or link) already exists there; not overwriting it"]
            ) from None
        except OSError as err:
            raise SessionError(str(p), [f"cannot create: {describe(err)}"]) from None
        _lock(fd, p)
        meta: dict[str, Any] = {
            "id": p.stem,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "moot_version": __version__,
        }
        if spec_source:
            meta["spec_source"] = spec_source
        if forked_from is not None:
            meta["forked_from"] = forked_from
        if spec_folder is not None:
            meta["spec_folder"] = spec_folder
        redact = Redactor.for_spec(spec_raw)  # a key typed into a field (or --set) stays out
        session_meta = redact.tree(meta)
        session_meta[SIGNER] = signer.public  # after redaction: a public key is no secret
        head: dict[str, Any] = {
            "schema": SCHEMA,
            "session": session_meta,
            "spec": redact.tree(spec_raw),
        }
        if documents:
            head["documents"] = [d.record() for d in documents]
        header = sealed("", head)
        header[SIGNATURE] = signer.sign(header[HASH])
        store = cls(p, real, header, fd, signer)
        try:
            store._append(_chunk(header))
        except SessionError:
            store.close()
            real.unlink(missing_ok=True)  # ours, and holding nothing worth keeping
            raise
        fsync_dir(real.parent)
        return store

    @classmethod
    def open_existing(
        cls, path: str | Path, *, force: bool = False, signer: Signer | None = None
    ) -> tuple[SessionStore, SessionData]:
        """Lock and load a session to continue it; a torn tail is backed up and dropped.

        A broken hash chain or a signature that does not hold is refused (the
        file was changed after it was written) unless ``force``; the chain then
        goes on from the stored hashes. New records are signed by ``signer``, else
        the user's key; a record names its key where the key changes.
        """
        p = Path(path)
        signer = signer or _user_signer()
        real = Path(os.path.realpath(p))
        fd = _open_locked(p, real)
        try:
            raw = read_fd(fd, SESSION_BYTES)
            data = _parse(p, raw)
            if data.chain and not force:
                raise SessionError(
                    str(p),
                    [
                        f"hash chain broken at {data.chain[0]}; not resuming a changed file: "
                        f"`moot verify {p}` lists what does not hold, "
                        f"`moot resume {p} --headless --force` continues anyway"
                    ],
                )
            if data.signatures.problems and not force:
                where, why = data.signatures.problems[0]
                raise SessionError(
                    str(p),
                    [
                        f"signature does not hold at {where}: {why}; not resuming a changed "
                        f"file under your key: `moot verify {p}` lists what does not hold, "
                        f"`moot resume {p} --headless --force` continues anyway"
                    ],
                )
            if data.torn:
                backup = _keep_backup(real, raw)
                os.ftruncate(fd, data.good_length)
                os.fsync(fd)
                data.warnings.append(f"the original file was kept as {backup.name}")
        except FileRefused as err:
            os.close(fd)
            raise SessionError(str(p), [str(err)]) from None
        except OSError as err:
            os.close(fd)
            raise SessionError(str(p), [f"cannot repair: {describe(err)}"]) from None
        except BaseException:
            os.close(fd)
            raise
        store = cls(p, real, dict(data.records[0].body), fd, signer)
        kept = [r for r in data.records if r.name != "result"]
        store._turns = [dict(r.body) for r in kept if r.name.startswith("turn ")]
        store._turn_chunks = (
            [None] * len(store._turns)
            if data.upgraded_from
            else _stored_turn_chunks(raw[: data.good_length], len(store._turns))
        )
        store._actions = [dict(r.body) for r in kept if r.name.startswith("operator action ")]
        store._result = data.result
        store._ended = [r for r in data.records if r.name.startswith(("result", "outcome "))]
        if (
            data.result is not None
            and data.result.get("decision_rule") == DecisionRule.SESSION_FULL
        ):
            refused = data.result.get("session_full")  # still full: the file only grows
            store.full = refused if isinstance(refused, int) else SESSION_BYTES
        store._tail = tail(kept)
        store._declared = current_signer(kept)
        if data.upgraded_from:  # renumbered on load: the file takes the new numbering first
            try:
                store._rewrite()
            except SessionError:
                store.close()
                raise
        return store, data

    # ---------------------------------------------------------------- writing
    def _failure(self, err: OSError) -> SessionError:
        self._failed = SessionError(
            str(self.path),
            [
                f"could not save: {describe(err)}; the file keeps every record up to the "
                f"last complete one: free space and continue with `moot resume {self.path}`"
            ],
        )
        return self._failed

    def _usable_fd(self) -> int:
        if self._failed is not None:
            raise self._failed
        if self._fd is None:
            raise SessionError(str(self.path), ["the session file is closed"])
        return self._fd

    def _full(self, size: int) -> SessionFullError:
        """The file would pass what the reader takes: refuse the write, lose nothing."""
        self.full = size
        return SessionFullError(
            str(self.path),
            [
                f"the session is full: one more record would make it {size:,} bytes, past what "
                f"a session file of {SESSION_BYTES:,} bytes leaves its records (with room kept "
                f"for its result); it keeps every record up to the last complete one, and "
                f"`moot fork` starts a new session from any turn of it"
            ],
            size,
        )

    def _room(self) -> int:
        """Bytes the appended records may take: the reader's limit less the result's room."""
        return record_room(len(self._turns))

    def _append(self, text: str, *, limit: int | None = None, defer: bool = False) -> None:
        """Write ``text`` whole and fsync it; ``defer``: the fsync is ``durable``'s, off the loop."""
        fd = self._usable_fd()
        try:
            size = os.fstat(fd).st_size
        except OSError as err:
            raise self._failure(err) from None
        data = _encode(text)
        if limit is not None and size + len(data) > limit:
            raise self._full(size + len(data))
        try:
            write_all(fd, data, self.write_fn)
            if not defer:
                os.fsync(fd)
        except OSError as err:
            try:  # leave no partial record behind (the loader would drop it anyway)
                os.ftruncate(fd, size)
                os.fsync(fd)
            except OSError:
                pass
            raise self._failure(err) from None
        if defer:
            self._durable.wrote(size + len(data))
        else:
            self._durable.synced_now(size + len(data))

    async def durable(self) -> None:
        """Return once every record appended so far is on disk; the fsync runs on a thread,
        so other debates on the loop go on meanwhile. A failed fsync fails the store, and
        the file is cut back to the records whose fsync returned."""
        fd = self._usable_fd()
        durability = self._durable  # a rewrite meanwhile replaces it, synced
        try:
            await durability.wait(fd)
        except OSError as err:
            raise self._failed or self._lost(fd, durability.synced, err) from None

    def _lost(self, fd: int, synced: int, err: OSError) -> SessionError:
        """An fsync failed: keep only the records whose fsync returned, and stop writing."""
        if fd == self._fd:
            try:
                os.ftruncate(fd, synced)
                os.fsync(fd)
            except OSError:
                pass
        return self._failure(err)

    @property
    def header_hash(self) -> str:
        """The header record's hash (worked out for a file from before the chain): names the
        session the same on every resume and rename, and without a word of its title."""
        return str(self._header.get(HASH) or sealed("", self._header)[HASH])

    @property
    def last_hash(self) -> str:
        """The hash of the record committed last (the chain's tail), for traces to cite."""
        return self._tail

    def append_turn(self, turn: Turn) -> None:
        """Write the turn in order; it is on disk once ``durable`` returns (or at ``close``)."""
        record = compact_record(turn.to_record(), self._turns)
        self._turn_chunks.append(None)  # a rewrite meanwhile (after a result) serialises it
        try:
            self._turn_chunks[-1] = self._append_record("turns", self._turns, record, defer=True)
        except SessionError:
            self._turn_chunks.pop()
            raise

    def append_action(self, action: dict[str, Any]) -> None:
        self._append_record("operator_actions", self._actions, action)

    def _append_record(
        self,
        name: str,
        records: list[dict[str, Any]],
        record: dict[str, Any],
        *,
        defer: bool = False,
    ) -> str:
        """Seal and sign ``record`` onto the chain and commit it; on failure neither happened.
        Returns the record's text as written."""
        self._closed()
        before, declared = self._tail, self._declared
        body = self._signed(before, self._redact.tree(record))
        records.append(body)
        self._tail, self._declared = body[HASH], self._signer.public
        chunk = _record_chunk(name, body)
        try:
            self._append_or_rewrite(chunk, defer=defer)
        except SessionError:
            records.pop()
            self._tail, self._declared = before, declared
            raise
        return chunk

    def append_outcome(self, outcome: dict[str, Any]) -> None:
        """Seal and sign what became of the decision after the result (and the outcomes
        before it) and commit it: appended, so every record before stays as signed."""
        ended = self._ended
        if self._result is None or not ended:
            raise SessionError(str(self.path), ["no result: an outcome follows a decision"])
        declared, self._declared = self._declared, current_signer(ended) or self._declared
        try:
            body = self._signed(tail(ended), self._redact.tree(outcome))
        finally:
            self._declared = declared
        self._append(_record_chunk("outcomes", body), limit=SESSION_BYTES)
        self._ended = [*ended, Record(f"outcome {len(ended)}", body)]

    def _closed(self) -> None:
        """Refuse to change what an outcome follows: its signature covers every record before."""
        if any(r.name.startswith("outcome ") for r in self._ended):
            raise SessionError(
                str(self.path),
                [
                    "the decision has an outcome recorded after it, so nothing may change "
                    "before it: `moot fork` the session to go on"
                ],
            )

    def _signed(self, previous: str, record: dict[str, Any]) -> dict[str, Any]:
        """``record`` chained after ``previous`` and signed; naming the key if it changes here."""
        if self._declared != self._signer.public:
            record = {**record, SIGNER: self._signer.public}
        body = sealed(previous, record)
        body[SIGNATURE] = self._signer.sign(body[HASH])
        return body

    def _append_or_rewrite(self, chunk: str, *, defer: bool = False) -> None:
        # After a [result], records must stay before it: rewrite (rare: post-end actions).
        if self._result is not None:
            self._rewrite()
        else:
            self._append(chunk, limit=self._room(), defer=defer)

    def clear_result(self) -> None:
        """The debate goes on (the operator added a round): the old result no longer holds."""
        if self._result is not None:
            self._result = None
            self._rewrite()

    def set_result(self, result: dict[str, Any]) -> None:
        """Record the ``[result]``: the one write whose cost grows with the transcript."""
        before, self._result = self._result, self._redact.tree(_toml_safe(result))
        try:
            self._rewrite()
        except SessionError:
            self._result = before  # the file holds the old one still
            raise

    @property
    def result(self) -> dict[str, Any] | None:
        return self._result

    def _rewrite(self) -> None:
        self._closed()
        old = self._usable_fd()
        parts = [_chunk(self._header)]
        parts += [
            chunk or _record_chunk("turns", turn)
            for turn, chunk in zip(self._turns, self._turn_chunks, strict=True)
        ]
        parts += [_record_chunk("operator_actions", a) for a in self._actions]
        ended: list[Record] = []
        if self._result is not None:  # the last record: chained to whatever came before
            ended = [Record("result", self._signed(self._tail, self._result))]
            parts.append(_chunk({"result": ended[0].body}))
        data = _encode("".join(parts))
        if len(data) > SESSION_BYTES:  # the file as it stands is kept: it still reads back
            raise self._full(len(data))
        try:
            fd, tmp = temp_beside(self._real)
        except OSError as err:
            raise self._failure(err) from None
        try:
            write_all(fd, data, self.write_fn)
            os.fsync(fd)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # locked before it takes the name
            os.replace(tmp, self._real)  # replaces a planted link itself, never its target
        except OSError as err:
            os.close(fd)
            tmp.unlink(missing_ok=True)
            raise self._failure(err) from None
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        self._fd = fd
        self._ended = ended
        self._durable.settle()  # the old file's fsync in flight returns before its fd goes
        self._durable = Durability(len(data))
        os.close(old)
        fsync_dir(self._real.parent)

    def close(self) -> None:
        """Put on disk what was written and not yet synced (``moot fork``'s turns have no
        loop to wait on), then release the file and its lock."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        self._durable.settle()
        try:
            if self._failed is None and self._durable.synced < self._durable.written:
                os.fsync(fd)
        except OSError as err:
            raise self._failure(err) from None
        finally:
            os.close(fd)


def _toml_safe(value: Any) -> Any:
    """Drop None (TOML has no null) all the way down."""
    if isinstance(value, dict):
        return {str(k): _toml_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_toml_safe(v) for v in value if v is not None]
    return value
