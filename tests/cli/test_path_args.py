"""Paths on the command line and in the sessions folder that the file system would refuse."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.batch_specs import decided, write
from tui.cli import main
from tui.engine.record.session import SessionStore, load_session, new_session_path

LONG = "a" * 300  # past every common file system's 255-byte name limit (Errno 36)


def _exit(argv: list[str]) -> int:
    """The exit code whether the parser (SystemExit) or a command (return) ends the run."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", f"{LONG}.toml"],
        ["resume", f"{LONG}.toml"],
        ["resume", f"{LONG}.toml", "--headless"],
        ["run", f"{LONG}.toml"],
        ["fork", f"{LONG}.toml", "--at", "1"],
        ["batch", f"{LONG}.toml"],
        ["batch", f"{LONG}/x.toml"],
        ["new", f"{LONG}/x.toml"],
        ["inbox", "--sessions-dir", LONG],
        ["--sessions-dir", LONG, "inbox"],
        ["export", "s.toml", "-o", f"{LONG}.md"],
    ],
    ids=lambda argv: " ".join(a[:12] for a in argv),
)
def test_a_name_too_long_is_exit_2_with_the_limit(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _exit(argv) == 2
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err
    assert "too long" in err and "255" in err  # says which limit, not just Errno 36
    assert list(tmp_path.iterdir()) == []  # nothing created on the way


def test_a_sessions_folder_too_long_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("MOOT_SESSIONS_DIR", str(tmp_path / LONG))
    assert main(["inbox"]) == 0  # no such folder: nothing waits
    assert "nothing awaits a decision" in capsys.readouterr().out
    spec = write(tmp_path / "spec.toml", decided())
    assert main(["run", str(spec), "--headless"]) == 2
    err = capsys.readouterr().err
    assert "File name too long" in err and "internal error" not in err


def test_a_path_past_the_total_limit_is_exit_2(tmp_path: Path, capsys) -> None:
    deep = "/".join(["b" * 200] * 25)  # every name fits; the whole does not
    assert _exit(["replay", str(tmp_path / deep)]) == 2
    assert "too long" in capsys.readouterr().err


def test_fork_of_a_folder_is_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["fork", ".", "--at", "1"]) == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and "internal error" not in err
    assert list(tmp_path.iterdir()) == []


def test_a_dangling_link_at_the_next_name_is_passed_over(tmp_path: Path) -> None:
    when = datetime(2026, 3, 1, 10, 15, 0)
    planted = tmp_path / "20260301-101500-ship-it.toml"
    planted.symlink_to(tmp_path / "nowhere.toml")
    assert (
        new_session_path(tmp_path, "Ship it", when) == tmp_path / "20260301-101500-ship-it-2.toml"
    )


def test_a_planted_dangling_link_does_not_block_a_run(tmp_path: Path) -> None:
    """Whoever shares the sessions folder links every name the next seconds could take."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    target = tmp_path / "written-through-the-link.toml"
    now = datetime.now()
    for second in range(-2, 120):
        stamp = f"{now + timedelta(seconds=second):%Y%m%d-%H%M%S}"
        (folder / f"{stamp}-planted-debate.toml").symlink_to(target)
    spec = write(tmp_path / "spec.toml", decided("Planted debate"))
    assert main(["run", str(spec), "--headless", "--sessions-dir", str(folder)]) == 0
    written = [p for p in folder.iterdir() if not p.is_symlink()]
    assert len(written) == 1 and written[0].name.endswith("-planted-debate-2.toml")
    assert load_session(written[0]).result is not None
    assert not target.exists() and not os.path.lexists(tmp_path / "sessions" / "x")


def test_a_name_taken_after_it_was_chosen_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link appears between choosing the name and creating the file (a race)."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    target = tmp_path / "written-through-the-link.toml"
    real_create = SessionStore.create
    planted: list[Path] = []

    def plant_first(cls, path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        if not planted:
            Path(path).symlink_to(target)
            planted.append(Path(path))
        return real_create(path, *args, **kwargs)

    monkeypatch.setattr(SessionStore, "create", classmethod(plant_first))
    spec = write(tmp_path / "spec.toml", decided("Raced debate"))
    assert main(["run", str(spec), "--headless", "--sessions-dir", str(folder)]) == 0
    written = [p for p in folder.iterdir() if not p.is_symlink()]
    assert planted and len(written) == 1 and written[0] != planted[0]
    assert load_session(written[0]).result is not None and not target.exists()


def test_the_name_given_with_out_is_never_swapped(tmp_path: Path, capsys) -> None:
    out = tmp_path / "mine.toml"
    out.symlink_to(tmp_path / "nowhere.toml")
    spec = write(tmp_path / "spec.toml", decided())
    assert main(["run", str(spec), "--headless", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.toml", "spec.toml"]
