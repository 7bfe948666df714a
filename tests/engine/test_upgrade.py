"""Session files written by moot 0.1.0 (turns numbered from 0) load, resume and replay.

The fixtures under tests/fixtures/ were written by the 0.1.0 release itself
(``moot run sessions/examples/scripted-*.toml --headless``), not by hand.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from tests.helpers import SCRIPTED
from tui import __version__
from tui.engine.protocols.refine import RefineProtocol
from tui.engine.record.fileformat import COMMIT
from tui.engine.record.live import LiveSession
from tui.engine.record.replay import protocol_at
from tui.engine.record.session import load_session
from tui.engine.record.upgrade import upgrade_session
from tui.render.export import to_markdown

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def fixture(name: str, tmp_path: Path) -> Path:
    """A private copy: loading must not touch it, resuming rewrites it."""
    path = tmp_path / f"{name}.toml"
    shutil.copyfile(FIXTURES / f"session-0.1.0-{name}.toml", path)
    return path


def test_a_0_1_0_file_loads_numbered_from_one_and_is_left_as_written(tmp_path: Path) -> None:
    path = fixture("exhausted", tmp_path)
    before = path.read_bytes()
    assert b"index = 0\n" in before and b'moot_version = "0.1.0"' in before
    data = load_session(path)
    assert data.upgraded_from == "0.1.0"
    assert data.meta["moot_version"] == __version__ and data.meta["upgraded_from"] == "0.1.0"
    assert [t.index for t in data.turns] == list(range(1, len(data.turns) + 1))
    assert path.read_bytes() == before  # loading (replay, export) never writes


def test_turn_references_in_saw_and_result_name_the_same_turns(tmp_path: Path) -> None:
    data = load_session(fixture("refine", tmp_path))
    by_number = {t.index: t for t in data.turns}
    critique = next(t for t in data.turns if t.phase == "critique")
    assert critique.saw == ["motion", "candidate:t1"]  # author A's candidate is turn 1
    assert by_number[1].phase == "author_a"
    assert data.result is not None
    winner = by_number[data.result["winning_turn"]]
    assert winner.content["candidate"] == data.result["winning_candidate"]
    for row in data.result["judge_rounds"]:
        assert by_number[row["incumbent_turn"]].kind == "candidate"
        assert by_number[row["challenger_turn"]].kind == "candidate"

    rubric = load_session(fixture("rubric", tmp_path))
    assert rubric.result is not None
    assessed = {t.index for t in rubric.turns if "rubric" in t.derived}
    assert rubric.result["rubric_assessed_turn"] == max(assessed)
    assert {row["turn"] for row in rubric.result["rubric_turns"]} == assessed
    proposal = [t for t in rubric.turns if t.speaker == "author"][-1]
    assert rubric.result["proposal_id"] == f"r{proposal.round}:author:t{proposal.index}"


def test_replay_rebuilds_the_recorded_result_from_upgraded_turns(tmp_path: Path) -> None:
    data = load_session(fixture("refine", tmp_path))
    rebuilt = protocol_at(data.spec, data.turns)
    assert isinstance(rebuilt, RefineProtocol) and data.result is not None
    assert rebuilt.rounds == data.result["judge_rounds"]
    assert to_markdown(data).count("### Turn 1 ·") == 1  # the export shows the same numbers


def test_resume_extends_a_0_1_0_debate_and_writes_the_new_numbering(tmp_path: Path) -> None:
    path = fixture("exhausted", tmp_path)
    recorded = len(load_session(path).turns)
    session = LiveSession.resume(path, lambda d: SCRIPTED)
    try:
        # Renumbered on disk before anything is appended: never a file of mixed numbering.
        assert load_session(path).upgraded_from is None
        session.engine.extend()
        asyncio.run(session.engine.run())
    finally:
        session.close()
    data = load_session(path)
    assert data.upgraded_from is None  # rewritten in the current format on resume
    assert data.meta["moot_version"] == __version__ and data.meta["upgraded_from"] == "0.1.0"
    assert len(data.turns) > recorded
    assert [t.index for t in data.turns] == list(range(1, len(data.turns) + 1))
    assert data.result is not None and data.result["turns"] == len(data.turns)


def test_an_interrupted_0_1_0_run_resumes_to_the_same_end(tmp_path: Path) -> None:
    full = load_session(fixture("exhausted", tmp_path))
    chunks = (FIXTURES / "session-0.1.0-exhausted.toml").read_text().split(COMMIT)
    header_and_four_turns = COMMIT.join(chunks[:5]) + COMMIT  # as if killed after turn 4
    path = tmp_path / "interrupted.toml"
    path.write_text(header_and_four_turns)
    assert len(load_session(path).turns) == 4
    session = LiveSession.resume(path, lambda d: SCRIPTED)
    try:
        asyncio.run(session.engine.run())
    finally:
        session.close()
    done = load_session(path)
    assert [(t.index, t.speaker, t.vote, t.content) for t in done.turns] == [
        (t.index, t.speaker, t.vote, t.content) for t in full.turns
    ]
    assert done.result is not None and full.result is not None
    for key in ("decision", "decision_rule", "vote_tally", "final_votes", "speaker_schedule"):
        assert done.result[key] == full.result[key]


def test_upgrade_leaves_current_files_and_missing_turns_alone() -> None:
    current = {"session": {"moot_version": __version__}, "turns": [{"index": 1}]}
    assert upgrade_session(current) is None and current["turns"] == [{"index": 1}]
    old = {
        "session": {"moot_version": "0.1.0"},
        "turns": [{"index": 0, "saw": ["motion", "candidate:t0", "position:r1:a"]}],
        "result": {"judge_rounds": [{"incumbent_turn": -1, "challenger_turn": 0}]},
    }
    assert upgrade_session(old) == "0.1.0"
    assert old["turns"] == [{"index": 1, "saw": ["motion", "candidate:t1", "position:r1:a"]}]
    assert old["result"] == {"judge_rounds": [{"incumbent_turn": -1, "challenger_turn": 1}]}
