"""Lookups in every way a run starts or goes on: resume, fork, ``moot mcp`` and batch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from tests.test_lookups import DESIGN, challenge_raw, reviewer_turn, turns_of
from tui.engine.verify import verify_file

ROOT = Path(__file__).resolve().parents[1]
MARK = "# moot:commit\n"
DONE = (0, 3)  # decided, or ended unresolved: this one-round challenge may end either way


def moot(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def keep_records(path: Path, records: int) -> None:
    """Cut a session file after its first ``records`` records, as a run stopped there."""
    text = path.read_text()
    end = 0
    for _ in range(records):
        end = text.index(MARK, end) + len(MARK)
    path.write_text(text[:end])


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    spec_folder = tmp_path / "review"
    (spec_folder / "docs").mkdir(parents=True)
    (spec_folder / "docs" / "design.md").write_text(DESIGN)
    return spec_folder


def spec_file(folder: Path, raw: dict[str, Any]) -> Path:
    spec = folder / "review.toml"
    spec.write_text(tomli_w.dumps(raw))
    return spec


# ------------------------------------------------------------------ resume
def test_a_resumed_session_runs_its_tools_and_verifies(folder: Path, tmp_path: Path) -> None:
    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    out = folder / "session.toml"
    done = moot("run", spec.name, "--headless", "--out", str(out), cwd=folder)  # relative
    assert done.returncode in DONE, done.stderr[-2000:]
    keep_records(out, 1)  # the header only: stopped before the reviewer spoke
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()  # a resume from another folder still roots the tool in the spec's
    done = moot("resume", str(out), "--headless", cwd=elsewhere)
    assert done.returncode in DONE, done.stderr[-2000:]
    review = next(t for t in turns_of(out) if t.speaker == "reviewer")
    [lookup] = review.lookups or []
    assert lookup["ok"] is True and lookup["result"] == DESIGN, lookup
    assert review.derived["rubric"]["properties"][0]["evidence"][0]["admitted"] is True
    assert verify_file(out).ok


def test_a_resumed_session_whose_spec_folder_is_gone_refuses_its_lookups_on_record(
    folder: Path, tmp_path: Path
) -> None:
    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    out = tmp_path / "session.toml"
    assert moot("run", str(spec), "--headless", "--out", str(out), cwd=folder).returncode in DONE
    keep_records(out, 1)
    (folder / "docs" / "design.md").unlink()
    (folder / "docs").rmdir()
    done = moot("resume", str(out), "--headless", cwd=tmp_path)
    assert "tools" in done.stderr and "docs" in done.stderr, done.stderr[-2000:]
    assert done.returncode == 2  # a tool that cannot start stops the run at once, named
    assert verify_file(out).ok


def test_the_recorded_spec_folder_is_checked_by_verify(folder: Path) -> None:
    from tui.engine.session import load_session

    spec = spec_file(folder, challenge_raw(reviewer_turn("Payments deduplicates on the event id")))
    out = folder / "session.toml"
    assert moot("run", spec.name, "--headless", "--out", str(out), cwd=folder).returncode in DONE
    assert load_session(out).meta["spec_folder"] == str(folder.resolve())
    report = verify_file(out)
    assert any(c.field == "spec_folder" and c.ok for c in report.claims), report
