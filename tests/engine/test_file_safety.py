"""File attacks on session files and outputs: short and failing writes, links, planted files."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.batch_specs import write
from tests.helpers import SCRIPTED, debate_raw
from tui.cli import main
from tui.engine import SessionLockedError, validate_spec
from tui.engine.record.live import LiveSession
from tui.engine.record.session import SessionStore, load_session


def _spec(tmp_path: Path) -> Path:
    raw = debate_raw(
        {"a": ["release", "revise"], "b": ["revise", "release"], "c": ["escalate", "revise"]},
        title="File safety",
        motion="Keep every record.",
        max_rounds=2,
        consensus_threshold=3,
        phases=["proposal", "critique", "revision", "consensus"],
    )
    return write(tmp_path / "spec.toml", raw)


def _start(path: Path) -> LiveSession:
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, consensus_threshold=2)
    return LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=path)


def test_short_writes_are_completed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def dribble(fd: int, data: bytes) -> int:  # a write that takes at most 7 bytes
        calls.append(len(data))
        return os.write(fd, data[:7])

    monkeypatch.setattr(SessionStore, "write_fn", staticmethod(dribble))
    out = tmp_path / "s.toml"
    assert main(["run", str(_spec(tmp_path)), "--headless", "--out", str(out)]) == 3
    data = load_session(out)
    assert len(data.turns) == 24 and data.result is not None and not data.warnings
    assert len(calls) > 1000  # every record took many writes, and all of them landed


def test_disk_full_stops_with_exit_2_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    budget = {"bytes": 6_000}

    def nearly_full(fd: int, data: bytes) -> int:
        if budget["bytes"] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = min(len(data), budget["bytes"])
        budget["bytes"] -= n
        return os.write(fd, data[:n])  # the last one is short, then the disk is full

    monkeypatch.setattr(SessionStore, "write_fn", staticmethod(nearly_full))
    out = tmp_path / "s.toml"
    assert main(["run", str(_spec(tmp_path)), "--headless", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "could not save: No space left on device" in err and "moot resume" in err
    assert "Traceback" not in err
    cut = load_session(out)  # every committed record intact, no torn tail left
    assert 0 < len(cut.turns) < 24 and cut.result is None and not cut.warnings
    assert out.stat().st_size <= 6_000

    monkeypatch.undo()  # space freed
    assert main(["resume", str(out), "--headless"]) == 3
    done = load_session(out)
    assert len(done.turns) == 24 and done.result is not None
    assert [t.to_record() for t in done.turns[: len(cut.turns)]] == [
        t.to_record() for t in cut.turns
    ]


def test_failed_rewrite_keeps_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "s.toml"
    live = _start(out)
    before = out.read_bytes()

    def broken(fd: int, data: bytes) -> int:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(SessionStore, "write_fn", staticmethod(broken))
    with pytest.raises(Exception, match="could not save: Input/output error"):
        live.store.set_result({"decision": "release"})
    live.close()
    assert out.read_bytes() == before
    left = sorted(p.name for p in tmp_path.iterdir() if p.name != "config")  # the signing key's
    assert left == ["s.toml"]  # no temp file left


@pytest.mark.parametrize("kind", ["symlink", "hard link", "same path"])
def test_one_lock_per_file_whatever_the_path(tmp_path: Path, kind: str) -> None:
    out = tmp_path / "s.toml"
    live = _start(out)
    other = tmp_path / "elsewhere" / "alias.toml"
    other.parent.mkdir()
    if kind == "symlink":
        other.symlink_to(out)
    elif kind == "hard link":
        os.link(out, other)
    else:
        other = out
    try:
        with pytest.raises(SessionLockedError):
            SessionStore.open_existing(other)
        live.store.set_result({"decision": "release"})  # a rewrite: a new file takes the name
        if kind != "hard link":  # a hard link now names the old, replaced file
            with pytest.raises(SessionLockedError):
                SessionStore.open_existing(other)
    finally:
        live.close()
    store, _ = SessionStore.open_existing(out)
    store.close()


def test_second_process_refused_through_a_symlink(tmp_path: Path) -> None:
    out = tmp_path / "s.toml"
    link = tmp_path / "link.toml"
    live = _start(out)
    link.symlink_to(out)
    try:
        r = subprocess.run(
            [sys.executable, "-m", "tui", "resume", str(link), "--headless"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        live.close()
    assert r.returncode == 2 and "another moot process is running" in r.stderr
    assert len(load_session(out).turns) == 0  # the second process wrote nothing


def test_no_lock_file_left_by_a_run_or_a_refusal(tmp_path: Path) -> None:
    taken = tmp_path / "taken.toml"
    taken.write_text("precious")
    spec = _spec(tmp_path)
    assert main(["run", str(spec), "--headless", "--out", str(taken)]) == 2
    assert main(["run", str(spec), "--headless", "--out", "/dev/full"]) == 2
    assert main(["run", str(spec), "--headless", "--out", str(tmp_path / "ok.toml")]) == 3
    assert taken.read_text() == "precious"
    assert not list(tmp_path.glob(".*")) and not Path("/dev/.full.lock").exists()


def test_planted_temp_file_symlink_is_never_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "s.toml"
    (tmp_path / ".s.toml.tmp").symlink_to(victim)  # the name the old rewrite used
    live = _start(out)
    for n in range(20):  # whatever random name the rewrite picks next
        (tmp_path / f".s.toml.planted{n}.tmp").symlink_to(victim)
    live.store.set_result({"decision": "release"})
    live.close()
    assert victim.read_text() == "keep me"
    assert load_session(out).result == {"decision": "release"}
    assert not out.is_symlink()


def test_torn_backup_never_written_through_a_link(tmp_path: Path) -> None:
    from datetime import datetime, timedelta

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "s.toml"
    _start(out).close()
    with open(out, "a") as fh:
        fh.write("[[turns]]\nindex = 0\n")
    now = datetime.now()
    for s in range(-1, 5):  # the backup names of the next few seconds, planted as links
        stamp = (now + timedelta(seconds=s)).strftime("%Y%m%d-%H%M%S")
        (tmp_path / f"s.toml.torn-{stamp}.bak").symlink_to(victim)
    store, data = SessionStore.open_existing(out)
    store.close()
    assert victim.read_text() == "keep me"
    kept = [p for p in tmp_path.glob("s.toml.torn-*.bak") if not p.is_symlink()]
    assert len(kept) == 1 and "[[turns]]\nindex = 0" in kept[0].read_text()
    assert data.warnings[-1] == f"the original file was kept as {kept[0].name}"


def test_outputs_never_follow_a_link(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tui.render.beside import write_beside

    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "s.toml"
    _start(out).close()
    dangling = tmp_path / "dangling.md"
    dangling.symlink_to(tmp_path / "created-through-the-link.md")
    for target in (dangling, tmp_path / "to-victim.md"):
        if not target.is_symlink():
            target.symlink_to(victim)
        assert main(["export", str(out), "-o", str(target)]) == 2
        assert main(["new", str(target)]) == 2
    assert "already exists there" in capsys.readouterr().err
    assert victim.read_text() == "keep me"
    assert not (tmp_path / "created-through-the-link.md").exists()
    beside = tmp_path / "s.md"
    beside.symlink_to(victim)
    assert write_beside(out, "markdown") == beside
    assert victim.read_text() == "keep me"
    assert not beside.is_symlink() and beside.read_text().startswith("# Test debate")


def test_session_list_survives_a_fifo_and_a_depth_bomb(tmp_path: Path) -> None:
    from tui.app.screens.home import list_sessions

    _start(tmp_path / "good.toml").close()
    os.mkfifo(tmp_path / "fifo.toml")
    (tmp_path / "bomb.toml").write_text("x" + ".x" * 100_000 + " = 1\n# moot:commit\n")
    rows = {row.path.name: row for row in list_sessions(tmp_path)}
    assert rows["fifo.toml"].decision == "damaged" and rows["bomb.toml"].decision == "damaged"
    assert rows["good.toml"].title == "Test debate"


def test_config_save_ignores_a_planted_temp_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui.config import load_config, save_config

    monkeypatch.setenv("MOOT_CONFIG_DIR", str(tmp_path))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "config.toml.tmp").symlink_to(victim)  # the name the old save used
    save_config({"theme": "moot-light"})
    assert victim.read_text() == "keep me"
    assert load_config() == {"theme": "moot-light"}
    (tmp_path / "config.toml").unlink()
    os.mkfifo(tmp_path / "config.toml")
    assert load_config() == {}  # a FIFO is not read (it would block start-up)
