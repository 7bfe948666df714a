"""Session files: append-only writes, exact round trips, torn tails, damage, locks."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SCRIPTED, adversary_raw, debate_raw, with_script
from tui.engine import SessionError, SessionLockedError, validate_spec
from tui.engine.record.fileformat import COMMIT
from tui.engine.record.live import LiveSession
from tui.engine.record.session import SessionStore, load_session, new_session_path


def run_live(raw: dict[str, Any], path: Path) -> LiveSession:
    spec = validate_spec(raw)
    live = LiveSession.start(spec, raw, lambda d: SCRIPTED, out=path)
    asyncio.run(live.engine.run())
    return live


def test_file_name_and_schema(tmp_path: Path) -> None:
    p = new_session_path(tmp_path, "Ship it? Now!")
    assert p.name.endswith("-ship-it-now.toml") and len(p.name.split("-")[0]) == 8
    live = run_live(debate_raw({"a": ["release"], "b": ["release"]}, consensus_threshold=2), p)
    live.close()
    text = p.read_text()
    assert text.startswith('schema = "moot.session/1"')
    data = load_session(p)
    assert data.result is not None
    assert data.result["decision"] == "release" and data.result["decided_by"] == "rule"
    assert [t.speaker for t in data.turns] == ["a", "b"]
    assert data.spec_raw["debate"]["title"] == "Test debate"


def test_written_after_every_turn_append_only(tmp_path: Path) -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"]},
        consensus_threshold=2,
        max_rounds=2,
        phases=["proposal"],
    )
    spec = validate_spec(raw)
    p = tmp_path / "s.toml"
    live = LiveSession.start(spec, raw, lambda d: SCRIPTED, out=p)
    sizes: list[int] = []
    counts: list[int] = []

    def on_event(event) -> None:  # noqa: ANN001
        if type(event).__name__ == "TurnCompleted":
            sizes.append(p.stat().st_size)
            counts.append(len(load_session(p).turns))

    live.engine.subscribe(on_event)
    asyncio.run(live.engine.run())
    live.close()
    assert counts == [1, 2, 3, 4]  # on disk before anyone hears of the turn
    assert sizes == sorted(sizes)


def test_round_trips_hostile_text_exactly(tmp_path: Path) -> None:
    hostile = "[bold red]x[/] [link=http://e.vil]y[/link] [unclosed \x1b[31mred\x1b[0m\n# moot:commit\n\"\"\"'''\t\u202e"
    raw = with_script(
        debate_raw({"a": ["release"], "b": ["release"]}, consensus_threshold=2),
        "a",
        stances=[hostile + "z" * 1000],
    )
    p = tmp_path / "h.toml"
    run_live(raw, p).close()
    data = load_session(p)
    assert data.turns[0].content["stance"] == hostile + "z" * 1000


def test_operator_actions_recorded_with_time(tmp_path: Path) -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"]},
        consensus_threshold=2,
        max_rounds=1,
        phases=["proposal"],
    )
    p = tmp_path / "o.toml"
    live = run_live(raw, p)
    live.engine.decide("revise", "Needs a rollback plan.")
    live.close()
    data = load_session(p)
    assert data.result is not None
    assert data.result["decided_by"] == "operator"
    assert data.result["decision_rule"] == "operator_decision"
    assert data.result["rationale"] == "Needs a rollback plan."
    assert data.actions[-1]["action"] == "decide" and data.actions[-1]["at"]


def test_extend_clears_stale_result_then_records_new(tmp_path: Path) -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"]},
        consensus_threshold=2,
        max_rounds=1,
        phases=["proposal"],
    )
    p = tmp_path / "e.toml"
    live = run_live(raw, p)
    live.engine.extend()
    assert load_session(p).result is None
    asyncio.run(live.engine.run())
    live.close()
    data = load_session(p)
    assert data.result is not None
    assert data.result["max_rounds"] == 2 and len(data.turns) == 4


def test_no_secret_in_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_PROVIDER_KEY", "very-secret-value-123")
    raw = debate_raw({"a": ["release"], "b": ["release"]}, consensus_threshold=2)
    raw["debaters"][0]["api_key_env"] = "TEST_PROVIDER_KEY"
    p = tmp_path / "k.toml"
    run_live(raw, p).close()
    assert "very-secret-value-123" not in p.read_text()
    assert "TEST_PROVIDER_KEY" in p.read_text()  # the name, not the value


def test_torn_tail_dropped_with_warning_and_backup(tmp_path: Path) -> None:
    raw = adversary_raw(["revise", "release"])
    p = tmp_path / "t.toml"
    run_live(raw, p).close()
    good = load_session(p)
    with open(p, "a") as fh:
        fh.write('[[turns]]\nindex = 4\nround = 3\nphase = "rev')
    data = load_session(p)
    assert len(data.turns) == len(good.turns)
    assert data.warnings and "torn tail" in data.warnings[0]
    store, resumed = SessionStore.open_existing(p)
    store.close()
    backups = list(tmp_path.glob("t.toml.torn-*.bak"))
    assert len(backups) == 1 and "[[turns]]\nindex = 4" in backups[0].read_text()
    assert load_session(p).warnings == []  # truncated to the last commit marker


def test_lock_refuses_a_second_process(tmp_path: Path) -> None:
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, consensus_threshold=2)
    spec = validate_spec(raw)
    p = tmp_path / "l.toml"
    live = LiveSession.start(spec, raw, lambda d: SCRIPTED, out=p)
    with pytest.raises(SessionLockedError):
        LiveSession.resume(p, lambda d: SCRIPTED)
    live.close()
    LiveSession.resume(p, lambda d: SCRIPTED).close()


def test_create_never_overwrites(tmp_path: Path) -> None:
    p = tmp_path / "x.toml"
    p.write_text("precious")
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, consensus_threshold=2)
    with pytest.raises(SessionError, match="not overwriting"):
        LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=p)
    assert p.read_text() == "precious"


DAMAGE = {
    "not toml": lambda t: t.replace("[[turns]]", "[[turns]", 1),
    "wrong schema": lambda t: t.replace("moot.session/1", "other/9", 1),
    "turn missing speaker": lambda t: t.replace('speaker = "a"\n', "", 1),
    "turn wrong type": lambda t: t.replace("round = 1", 'round = "one"', 1),
    "bad spec copy": lambda t: t.replace('model = "scripted"', "model = 3", 1),
    "unknown speaker": lambda t: t.replace('speaker = "a"', 'speaker = "zed"', 1),
    "no marker": lambda t: t.replace(COMMIT, ""),
    "unknown turn kind": lambda t: t.replace('kind = "position"', 'kind = "pos[ition"', 1),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_session_named_and_never_overwritten(tmp_path: Path, kind: str) -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"]},
        consensus_threshold=2,
        max_rounds=1,
        phases=["proposal"],
    )
    p = tmp_path / "d.toml"
    run_live(raw, p).close()
    damaged = DAMAGE[kind](p.read_text())
    p.write_text(damaged)
    before = os.stat(p).st_mtime_ns
    with pytest.raises(SessionError) as info:
        LiveSession.resume(p, lambda d: SCRIPTED)
    assert info.value.problems
    if kind == "unknown turn kind":
        assert any("turns[0].kind" in problem for problem in info.value.problems)
    assert p.read_text() == damaged and os.stat(p).st_mtime_ns == before
    assert not list(tmp_path.glob("d.toml.torn-*.bak"))


def test_credentials_in_api_base_refused_and_redacted() -> None:
    from tui.engine import SpecError
    from tui.engine.basics.redact import redact

    for base in ("http://bob:hunter2pw@127.0.0.1:1/v1", "http://h/v1?api_key=abc123"):
        raw = debate_raw({"a": ["release"], "b": ["release"]})
        raw["debaters"][0]["api_base"] = base
        with pytest.raises(SpecError, match="api_base: holds a credential"):
            validate_spec(raw)
    text = redact("could not reach http://bob:hunter2pw@host/v1?token=zzz&x=1")
    assert "hunter2pw" not in text and "zzz" not in text and "x=1" in text


def test_decide_written_before_a_crash_is_honoured_on_resume(tmp_path: Path) -> None:
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"]},
        consensus_threshold=2,
        max_rounds=3,
        phases=["proposal"],
    )
    spec = validate_spec(raw)
    p = tmp_path / "c.toml"
    live = LiveSession.start(spec, raw, lambda d: SCRIPTED, out=p)
    asyncio.run(live.engine.run())  # exhausts: escalate
    live.store.clear_result()
    live.store.append_action(  # as if the process died right after writing the decision
        {
            "at": "2026-11-21T00:00:00",
            "action": "decide",
            "after_turn": 6,
            "vote": "revise",
            "rationale": "Needs a rollback plan.",
        }
    )
    live.close()
    resumed = LiveSession.resume(p, lambda d: SCRIPTED)
    decision = asyncio.run(resumed.engine.run())
    resumed.close()
    assert (decision.decision, decision.rule, decision.decided_by) == (
        "revise",
        "operator_decision",
        "operator",
    )
    data = load_session(p)
    assert data.result is not None
    assert len(data.turns) == 6 and data.result["rationale"] == "Needs a rollback plan."


def test_a_second_process_cannot_resume_a_running_session(tmp_path: Path) -> None:
    import subprocess
    import sys

    raw = debate_raw({"a": ["release"], "b": ["revise"]}, consensus_threshold=2)
    spec = validate_spec(raw)
    p = tmp_path / "l.toml"
    live = LiveSession.start(spec, raw, lambda d: SCRIPTED, out=p)
    try:
        r = subprocess.run(
            [sys.executable, "-m", "tui", "resume", str(p), "--headless"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 2 and "another moot process is running" in r.stderr
    finally:
        live.close()
    r = subprocess.run(
        [sys.executable, "-m", "tui", "resume", str(p), "--headless"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode in (0, 3), r.stderr


def _multibyte_session(tmp_path: Path) -> tuple[Path, bytes, list[int]]:
    """A finished session whose turns hold multibyte text; returns its bytes and
    the offsets where each record ends (header, turn 0, turn 1, result)."""
    raw = with_script(
        debate_raw({"a": ["release"], "b": ["revise"]}, consensus_threshold=2, max_rounds=1),
        "b",
        stances=["é—日本語 🚀 " * 20],
    )
    raw["debate"]["phases"] = ["proposal"]
    p = tmp_path / "m.toml"
    run_live(raw, p).close()
    data = p.read_bytes()
    marker = COMMIT.encode()
    ends, at = [], 0
    while (at := data.find(marker, at)) != -1:
        at += len(marker)
        ends.append(at)
    assert len(ends) == 4
    return p, data, ends


def test_tear_at_any_byte_keeps_the_last_complete_record(tmp_path: Path) -> None:
    p, data, ends = _multibyte_session(tmp_path)
    whole = load_session(p)
    assert len(whole.turns) == 2 and "日本語" in whole.turns[1].content["stance"]
    for cut in range(ends[1], ends[3]):  # every byte of turn 1 and of the result
        p.write_bytes(data[:cut])
        torn = load_session(p)  # never refused, whatever byte the tear falls on
        assert len(torn.turns) == (1 if cut < ends[2] else 2), cut
        assert torn.result is None, cut
        tail = data[:cut][torn.good_length :]
        assert bool(torn.warnings) == bool(tail.strip()), cut
    p.write_bytes(data[: ends[1] + 40])
    assert "an unfinished [turns] record" in load_session(p).warnings[0]


@pytest.mark.parametrize("variant", ["crlf", "bom", "bom+crlf"])
def test_crlf_and_bom_accepted_and_resumable(tmp_path: Path, variant: str) -> None:
    p, data, ends = _multibyte_session(tmp_path)
    data = data[: ends[2]]  # two turns, no result yet
    if "crlf" in variant:
        data = data.replace(b"\n", b"\r\n")
    if "bom" in variant:
        data = b"\xef\xbb\xbf" + data
    p.write_bytes(data)
    loaded = load_session(p)
    assert len(loaded.turns) == 2 and not loaded.warnings
    p.write_bytes(data + b"[[turns]]\r\nindex = 2\r\n")  # and a torn tail after them
    resumed = LiveSession.resume(p, lambda d: SCRIPTED)
    assert resumed.resumed_from is not None and "torn tail" in resumed.resumed_from.warnings[0]
    asyncio.run(resumed.engine.run())
    resumed.close()
    done = load_session(p)
    assert len(done.turns) == 2 and done.result is not None and not done.warnings


def test_reading_a_torn_file_warns_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tui.cli import main

    p, data, ends = _multibyte_session(tmp_path)
    p.write_bytes(data[: ends[1] + 60])
    assert main(["export", str(p), "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "torn tail of 60 bytes" in err
    assert re.search(r"an unfinished \[turns\] record \(index \d\)", err)
    assert main(["resume", str(p), "--headless"]) in (0, 3)
    err = capsys.readouterr().err
    assert "torn tail" in err and "kept as m.toml.torn-" in err


def test_every_record_is_chained_and_a_reordering_is_named(tmp_path: Path) -> None:
    from tui.engine.record.verify import verify_file

    raw = debate_raw(
        {"a": ["release"], "b": ["revise"]},
        consensus_threshold=2,
        max_rounds=1,
        phases=["proposal"],
    )
    p = tmp_path / "c.toml"
    live = run_live(raw, p)  # escalates; the result is written, then rewritten below
    live.engine.note("Weigh the rollback cost.")
    live.engine.extend()
    asyncio.run(live.engine.run())
    live.engine.decide("revise", "Rollback first.")
    live.close()
    data = load_session(p)
    names = [r.name for r in data.records]
    assert names[0] == "header" and names[-1] == "result" and "turn 4" in names
    assert all(r.stored for r in data.records) and data.chain == [] and not data.warnings
    assert data.markers == len(data.records)
    assert verify_file(p).ok

    text = p.read_text()
    chunks = text.split(COMMIT)
    first, second = [i for i, c in enumerate(chunks) if c.lstrip().startswith("[[operator_")][:2]
    chunks[first], chunks[second] = chunks[second], chunks[first]
    p.write_text(COMMIT.join(chunks))
    moved = load_session(p)
    assert [b.record for b in moved.chain][:1] == ["operator action 1 (extend)"]  # moved up
    assert "hash chain is broken at operator action 1" in moved.warnings[0]


def test_a_resumed_0_1_0_file_is_chained_from_its_next_record(tmp_path: Path) -> None:
    import shutil

    from tui.engine.record.verify import verify_file

    p = tmp_path / "old.toml"
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "session-0.1.0-exhausted.toml"
    shutil.copyfile(fixture, p)
    assert load_session(p).chain == []  # unchained, and accepted as written before the chain
    live = LiveSession.resume(p, lambda d: SCRIPTED)
    asyncio.run(live.engine.run())  # replays to the recorded escalation
    live.engine.extend()
    asyncio.run(live.engine.run())
    live.close()
    data = load_session(p)
    stored = [r.stored is not None for r in data.records]
    first = stored.index(True)
    assert first > 1 and all(stored[first:]) and not any(stored[:first])
    assert data.chain == [] and verify_file(p).ok

    # The chained records seal the older ones: editing one breaks the chain where it starts.
    said = data.turns[0].content["stance"]
    p.write_text(p.read_text().replace(said, said + " (edited)", 1))
    assert [str(b) for b in load_session(p).chain][0].startswith(data.records[first].name)


def test_a_session_with_another_hard_link_is_not_resumed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The result is written by replacing the file: the other name would keep the old
    inode (every turn, no result). Refused by name, and nothing is written."""
    from tui.cli import main

    p, data, ends = _multibyte_session(tmp_path)
    p.write_bytes(data[: ends[2]])  # two turns, no result yet
    other = tmp_path / "other-name.toml"
    os.link(p, other)
    assert main(["resume", str(p), "--headless"]) == 2
    err = capsys.readouterr().err
    assert str(p) in err and "2 names (hard links)" in err and "internal error" not in err
    assert p.read_bytes() == other.read_bytes() == data[: ends[2]]
    assert os.stat(p).st_ino == os.stat(other).st_ino
    os.unlink(other)  # one name again: it resumes, and the result lands under it
    assert main(["resume", str(p), "--headless"]) in (0, 3)
    assert load_session(p).result is not None
