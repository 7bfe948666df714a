"""A turn's fsync runs off the event loop, and no turn is told of before its fsync returned.

Many debates share one loop (``moot batch``, ``moot mcp``, the console): a commit's
fsync held by a slow disk must not stop the others, and the debate whose fsync is
held must not count on that turn being on disk: no ``TurnCompleted`` for it, and
no later turn, until the fsync has returned.
"""

from __future__ import annotations

import asyncio
import errno
import os
import threading
from pathlib import Path

import pytest

from tests.helpers import SCRIPTED, debate_raw, until
from tui.engine.basics.errors import SessionError
from tui.engine.record.live import LiveSession
from tui.engine.record.session import SessionStore, load_session
from tui.engine.record.verify import verify_file
from tui.engine.run.events import Event, TurnCompleted
from tui.engine.specs.spec import validate_spec

RAW = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=2, phases=["proposal"])
TURNS = 4  # two debaters that never agree, two rounds of one phase
COMMIT = "# moot:commit\n"


def _start(path: Path) -> LiveSession:
    return LiveSession.start(validate_spec(RAW), RAW, lambda _d: SCRIPTED, out=path)


def _names(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


def _told(live: LiveSession) -> list[int]:
    told: list[int] = []

    def on(event: Event) -> None:
        if isinstance(event, TurnCompleted):
            told.append(event.turn.index)

    live.engine.subscribe(on)
    return told


async def test_a_held_fsync_stops_neither_the_loop_nor_another_debate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_path, fast_path = tmp_path / "slow.toml", tmp_path / "fast.toml"
    slow, fast = _start(slow_path), _start(fast_path)  # each header fsynced as it was
    held, release, returned = threading.Event(), threading.Event(), threading.Event()
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if _names(fd) == str(slow_path) and not held.is_set():  # the slow file's first turn
            held.set()
            release.wait(timeout=10)  # bounds the case where the loop itself is held
            real_fsync(fd)
            returned.set()
            return
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    told = _told(slow)
    slow_run = asyncio.ensure_future(slow.engine.run())
    try:
        await until(held.is_set)
        await fast.engine.run()  # a whole debate, every turn committed, on the same loop
        assert not returned.is_set(), "the other debate waited for the slow file's fsync"
        assert len(load_session(fast_path).turns) == TURNS
        assert told == [], "a turn was told of before its fsync returned"
        assert "[[turns]]" in slow_path.read_text()  # written on the loop, in order
        release.set()
        await slow_run
    finally:
        release.set()
        slow.close()
        fast.close()
    assert told == list(range(1, TURNS + 1))
    for path in (slow_path, fast_path):
        report = await asyncio.to_thread(verify_file, path)  # it runs a loop of its own
        assert report.ok, [c for c in report.claims if not c.ok]


async def test_a_failed_fsync_stops_the_run_and_keeps_what_was_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.toml"
    live = _start(path)
    real_fsync = os.fsync
    synced = {"turns": 0}

    def fsync(fd: int) -> None:
        if _names(fd) == str(path):
            synced["turns"] += 1
            if synced["turns"] == 2:  # the second turn's
                raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    told = _told(live)
    with pytest.raises(SessionError, match="could not save: Input/output error"):
        await live.engine.run()
    live.close()
    monkeypatch.undo()
    assert told == [1]  # the turn whose fsync failed was never told of
    kept = load_session(path)
    assert [t.index for t in kept.turns] == [1] and not kept.warnings  # chain and signatures hold


def test_a_turn_appended_outside_the_engine_is_on_disk_when_the_store_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``moot fork`` appends turns with no loop to wait on: closing the store syncs them."""
    source = tmp_path / "source.toml"
    live = _start(source)
    asyncio.run(live.engine.run())
    live.close()
    turn = load_session(source).turns[0]
    path = tmp_path / "copy.toml"
    store = SessionStore.create(path, RAW)
    real_fsync = os.fsync
    synced_at: list[int] = []

    def fsync(fd: int) -> None:
        if _names(fd) == str(path):
            synced_at.append(os.fstat(fd).st_size)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    store.append_turn(turn)
    size = path.stat().st_size
    store.close()
    assert synced_at and synced_at[-1] == size


def test_the_results_rewrite_copies_the_stored_turns_instead_of_serialising_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resumed long session ends by rewriting the file with its result: each turn's
    text is copied as the file held it, and the file reads back and verifies the same."""
    import tui.engine.record.session as session

    path = tmp_path / "s.toml"
    live = _start(path)
    asyncio.run(live.engine.run())
    live.close()
    records = path.read_text(encoding="utf-8").split(COMMIT)
    path.write_text(COMMIT.join(records[:-2]) + COMMIT, encoding="utf-8")  # cut before [result]
    before = load_session(path)
    serialised: list[str] = []
    real_chunk = session._record_chunk

    def counting(name: str, record: dict[str, object]) -> str:
        serialised.append(name)
        return real_chunk(name, record)

    monkeypatch.setattr(session, "_record_chunk", counting)
    live = LiveSession.resume(path, lambda _d: SCRIPTED)
    asyncio.run(live.engine.run())
    live.close()
    assert "turns" not in serialised
    after = load_session(path)
    assert after.result is not None and not after.warnings
    assert [t.to_record() for t in after.turns] == [t.to_record() for t in before.turns]
    assert verify_file(path).ok
