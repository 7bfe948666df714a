"""The escalation inbox: exactly the sessions that ended unresolved, newest first."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.batch_specs import decided, unresolved, write
from tui.commands.batch import collect, run_items
from tui.commands.inbox import awaiting
from tui.engine.record.live import LiveSession
from tui.engine.specs.spec import read_spec_file
from tui.providers.scripted import ScriptedProvider


def run_specs(tmp_path: Path, raws: dict[str, dict[str, Any]]) -> dict[str, Path]:
    """Run each spec in one process; returns the session file per spec name."""
    paths = [str(write(tmp_path / "specs" / f"{name}.toml", raw)) for name, raw in raws.items()]
    items = collect(paths)
    provider = ScriptedProvider()
    asyncio.run(run_items(items, directory=tmp_path / "sessions", provider_for=lambda d: provider))
    return {Path(i.spec_path).stem: i.session for i in items if i.session is not None}


def test_inbox_lists_exactly_the_unresolved_sessions_newest_first(tmp_path: Path) -> None:
    sessions = run_specs(
        tmp_path,
        {
            "ok1": decided("Agreed one"),
            "split1": unresolved("Split one"),
            "ok2": decided("Agreed two"),
            "split2": unresolved("Split two", ["release", "revise", "hold"]),
        },
    )
    folder = tmp_path / "sessions"
    os.utime(sessions["split1"], (1_000_000, 1_000_000))  # older than split2
    # An interrupted run (no result), a damaged file and a stray file are not waiting.
    spec, raw = read_spec_file(tmp_path / "specs" / "split1.toml")
    running = LiveSession.start(spec, raw, lambda d: ScriptedProvider(), directory=folder)
    running.close()
    (folder / "damaged.toml").write_bytes(b"\x00\xff not toml at all")
    (folder / "notes.toml").write_text('title = "not a session"\n# moot:commit\n')

    found = awaiting(folder)
    assert [a.path for a in found] == [sessions["split2"], sessions["split1"]]
    newest = found[0]
    assert newest.title == "Split two" and newest.protocol == "debate"
    assert newest.decision_rule == "max_rounds_exhausted"
    assert newest.vote_tally == {"release": 1, "revise": 1, "hold": 0}
    assert newest.votes == ["release", "revise", "hold"]

    done = subprocess.run(
        [sys.executable, "-m", "tui", "inbox", "--sessions-dir", str(folder), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [Path(a["path"]) for a in listed] == [sessions["split2"], sessions["split1"]]
    for a in listed:
        assert {"path", "title", "decision_rule", "vote_tally"} <= set(a)

    plain = subprocess.run(
        [sys.executable, "-m", "tui", "inbox", "--sessions-dir", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = plain.stdout.splitlines()
    assert len(lines) == 2 and "Split two" in lines[0] and str(sessions["split2"]) in lines[0]
    assert "release 1, revise 1, hold 0" in lines[0]


def test_empty_or_missing_folder_has_nothing_waiting(tmp_path: Path) -> None:
    assert awaiting(tmp_path / "nowhere") == []
    assert awaiting(tmp_path) == []
