"""A valid spec never grows a session past what the reader takes.

The writer keeps raw model text to a bound (the cut marked and hashed), the
store refuses a record that would take the file past the reader's limit, the
spec bounds a debate's length, and ``moot validate`` says when a spec could fill
its session. Each file written is one moot reads back and verifies.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.batch_specs import write
from tests.engine.test_verify_session import rewrite
from tests.helpers import SCRIPTED, debate_raw, run_live, with_script
from tui.cli import main
from tui.engine import validate_spec
from tui.engine.basics.bounded import SESSION_BYTES
from tui.engine.basics.errors import SpecError
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.core.rawtext import RAW_CHARS
from tui.engine.record import session
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.engine.specs.spec import Debater
from tui.exitcodes import ExitCode
from tui.render.present import present

HUGE_STANCE = "word " * 180_000  # 900 KB: a spec may hold it, and a script reuses it


def _huge_stance_raw(max_rounds: int) -> dict[str, Any]:
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=max_rounds)
    return with_script(raw, "a", stances=[HUGE_STANCE])


def test_rounds_times_debaters_past_a_session_are_refused_by_key_path() -> None:
    raw = debate_raw({f"d{i}": ["release"] for i in range(28)}, max_rounds=1000)
    with pytest.raises(SpecError) as caught:
        validate_spec(raw)
    assert any(p.startswith("debate.max_rounds:") and "28,000" in p for p in caught.value.problems)
    validate_spec(debate_raw({f"d{i}": ["release"] for i in range(28)}, max_rounds=50))


def test_more_phases_than_a_round_holds_are_refused_by_key_path() -> None:
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, phases=["proposal", "critique"] * 5)
    with pytest.raises(SpecError) as caught:
        validate_spec(raw)
    assert any(p.startswith("debate.phases: 10 phases") for p in caught.value.problems)


def test_validate_says_when_a_spec_could_outgrow_its_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = write(tmp_path / "big.toml", _huge_stance_raw(max_rounds=30))
    assert main(["validate", str(big)]) == ExitCode.DECIDED
    said = capsys.readouterr().out
    assert "warning: a full run could write about" in said and "32 MB" in said
    small = write(tmp_path / "small.toml", debate_raw({"a": ["release"], "b": ["revise"]}))
    assert main(["validate", str(small)]) == ExitCode.DECIDED
    assert "warning" not in capsys.readouterr().out


class _Counting:
    """The scripted debaters, counting every call made."""

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        self.calls += 1
        return await SCRIPTED.complete(request, on_token)

    async def aclose(self) -> None:
        return None


def test_a_full_session_ends_with_a_result_naming_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The store writes and reads under one limit; a smaller one fills in seconds, not minutes.
    limit = SESSION_BYTES // 10
    monkeypatch.setattr(session, "SESSION_BYTES", limit)
    raw = with_script(_huge_stance_raw(max_rounds=30), "a", stances=[HUGE_STANCE[:90_000]])
    path = tmp_path / "sessions" / "full.toml"  # the sessions folder the inbox lists
    asyncio.run(run_live(raw, lambda d: SCRIPTED, path))
    size = path.stat().st_size
    assert limit * 0.8 < size <= limit  # never past what the reader takes
    data = load_session(path)  # every record up to the last complete one reads back
    assert len(data.turns) > 30 and data.result is not None
    assert (data.result["decision"], data.result["decision_rule"]) == ("escalate", "session_full")
    assert data.result["turns"] == len(data.turns)  # the refused turn is not counted
    assert data.result["session_full"] > session.record_room(len(data.turns))
    report = verify_file(path)
    assert report.ok, [c.detail for c in report.failures]
    assert main(["inbox", "--json"]) == ExitCode.DECIDED
    listed = json.loads(capsys.readouterr().out)
    assert [(Path(e["path"]).resolve(), e["decision_rule"]) for e in listed] == [
        (path.resolve(), "session_full")
    ]

    counting = _Counting()
    resumed = LiveSession.resume(
        path, lambda d: counting
    )  # a resume makes no call it cannot record
    try:
        decision = asyncio.run(resumed.engine.run())
    finally:
        resumed.close()
    assert decision.rule == "session_full" and counting.calls == 0
    assert load_session(path).result == data.result
    assert verify_file(path).ok


def test_verify_refuses_a_full_session_claimed_with_room_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = SESSION_BYTES // 10
    monkeypatch.setattr(session, "SESSION_BYTES", limit)
    raw = with_script(_huge_stance_raw(max_rounds=30), "a", stances=[HUGE_STANCE[:90_000]])
    path = tmp_path / "full.toml"
    asyncio.run(run_live(raw, lambda d: SCRIPTED, path))
    rewrite(path, lambda doc: doc["result"].update(session_full=1000))
    failures = verify_file(path).failures
    assert ("result", "session_full") in [(c.where, c.field) for c in failures]


class _Flood:
    """Answers with megabytes of text that is not JSON (refused, and stored as raw)."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        return TurnReply(self.text, tokens_out=1)

    async def aclose(self) -> None:
        return None


def test_a_refused_reply_is_kept_cut_marked_and_hashed(tmp_path: Path) -> None:
    flood = "not json at all, " * 180_000  # 3 MB
    provider = _Flood(flood)

    def provider_for(debater: Debater) -> _Flood:
        return provider

    path = tmp_path / "flood.toml"
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=1, phases=["proposal"])
    asyncio.run(run_live(raw, provider_for, path))
    first = load_session(path).turns[0]
    assert first.invalid and first.raw == flood[:RAW_CHARS]
    assert first.raw_cut == {
        "chars": len(flood),
        "sha256": hashlib.sha256(flood.encode()).hexdigest(),
    }
    assert path.stat().st_size < 2 * (RAW_CHARS + 100_000)
    shown = {section.label: section.text for section in present(first)}
    assert shown["raw reply cut"].startswith(f"the first {RAW_CHARS:,} of {len(flood):,}")
    report = verify_file(path)
    assert report.ok, [c.detail for c in report.failures]

    rewrite(path, lambda doc: doc["turns"][0]["raw_cut"].update(chars=12))
    assert [(c.where, c.field) for c in verify_file(path).failures] == [("turn 1", "raw_cut")]
