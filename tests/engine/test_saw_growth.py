"""``saw`` is stored once per phase and referred to after: files grow with turns, not their square."""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SCRIPTED, debate_raw
from tui.engine import validate_spec
from tui.engine.record.live import LiveSession
from tui.engine.record.saw import compact_saw, expand_records, expand_saw
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file


def run_debate(tmp_path: Path, debaters: int, rounds: int = 2) -> tuple[LiveSession, Path]:
    ids = [f"d{i:02d}" for i in range(debaters)]
    votes = {d: ["release" if i % 2 else "revise"] for i, d in enumerate(ids)}  # never agree
    raw = debate_raw(votes, max_rounds=rounds, consensus_threshold=debaters)
    live = LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=tmp_path / "s.toml")
    try:
        asyncio.run(live.engine.run())
    finally:
        live.close()
    return live, live.path


def stored_turns(path: Path) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = tomllib.loads(path.read_text())["turns"]
    return turns


def test_later_turns_of_a_phase_store_references_that_load_as_the_full_list(
    tmp_path: Path,
) -> None:
    live, path = run_debate(tmp_path, 12)
    stored = stored_turns(path)
    consensus = [t for t in stored if (t["round"], t["phase"]) == (2, "consensus")]
    assert all(not s.startswith("@") for s in consensus[0]["saw"])  # the phase's full list
    assert all(any(s.startswith("@t") for s in t["saw"]) for t in consensus[1:])
    assert max(len(t["saw"]) for t in consensus[1:]) <= 4  # not one label per debater
    loaded = load_session(path)
    assert [t.saw for t in loaded.turns] == [t.saw for t in live.engine.state.turns]
    assert any(len(t.saw) > 12 for t in loaded.turns)  # what the console and exports see
    report = verify_file(path)
    assert report.ok, report.failures
    assert any(c.field == "saw" for c in report.claims)  # moot verify re-checked each view


def test_bytes_per_turn_stay_flat_as_debaters_grow(tmp_path: Path) -> None:
    sizes = {}
    for n in (4, 32):
        _, path = run_debate(tmp_path / str(n), n, rounds=1)
        saw_bytes = sum(len(repr(t["saw"])) for t in stored_turns(path))
        sizes[n] = saw_bytes / len(stored_turns(path))
    assert sizes[32] < 3 * sizes[4], sizes  # explicit lists grow about 8x here


def test_old_explicit_lists_still_read_and_a_broken_reference_stays_visible() -> None:
    full = {1: ["motion", "position:r1:a", "position:r1:b"]}
    assert expand_saw(["motion", "note:1"], full) == ["motion", "note:1"]
    assert expand_saw(["@t1[0:3]", "note:1"], full) == [*full[1], "note:1"]
    assert expand_saw(["@t9[0:1]", "@t1[2:7]"], full) == ["@t9[0:1]", "@t1[2:7]"]
    records = [{"index": 1, "saw": full[1]}, {"index": 2, "saw": ["@t1[1:3]"]}]
    assert expand_records(records)[1]["saw"] == full[1][1:]
    assert records[1]["saw"] == ["@t1[1:3]"]  # the stored record (and its hash) untouched


@pytest.mark.parametrize(
    ("base", "mine"),
    [
        (
            ["motion", "p:a", "c:x", "p:b", "p:c", "p:d"],
            ["motion", "p:b", "c:y", "p:a", "p:c", "p:d"],
        ),
        (["motion"] + [f"position:r1:d{i}" for i in range(40)], ["motion", "note:1"]),
        ([], ["motion"]),
    ],
)
def test_compaction_round_trips(base: list[str], mine: list[str]) -> None:
    assert expand_saw(compact_saw(mine, 5, base), {5: base}) == mine
