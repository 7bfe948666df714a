"""A parallel phase's record is a function of the schedule, never of timing or of the disk.

What a turn saw must not depend on which turns of its phase happened to be on disk
when a run was resumed, and which call failed first in time must not decide what
the result names. Each case ends in ``moot verify`` passing on moot's own file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_cut_engine import Cutter, play, raw_spec
from tests.fake_openai import FakeOpenAI, Status
from tests.helpers import SCRIPTED, debate_raw, run_live
from tui.engine.basics.vocab import DecisionRule
from tui.engine.core.ports import ProviderError, TokenSink, TurnReply, TurnRequest
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.engine.run.turns import CutAction, CutChoice
from tui.engine.specs.spec import Debater
from tui.providers.litellm_provider import LiteLLMProvider

# One worker loads LiteLLM (7 s of CPU a process), the one running this group:
# tests/conftest.py fails a test outside it that uses LiteLLM.
pytestmark = pytest.mark.xdist_group("litellm")

COMMIT = "# moot:commit\n"


def _exhausting_raw() -> dict[str, Any]:
    """Three debaters that never agree, over two rounds of parallel phases."""
    return debate_raw(
        {"builder": ["release"], "keeper": ["revise"], "skeptic": ["escalate"]},
        max_rounds=2,
        consensus_threshold=2,
        phases=["proposal", "critique", "consensus"],
    )


def _cut_after_turn(source: Path, target: Path, turns: int) -> None:
    """``target``: ``source`` up to and including the commit of its ``turns``-th turn,
    as a SIGKILL, Ctrl+C or a full disk leaves it."""
    records = source.read_text(encoding="utf-8").split(COMMIT)
    kept, seen = [], 0
    for record in records:
        kept.append(record + COMMIT)
        if "[[turns]]" in record:
            seen += 1
            if seen == turns:
                break
    target.write_text("".join(kept), encoding="utf-8")


def test_resuming_inside_a_parallel_phase_keeps_what_every_turn_saw(tmp_path: Path) -> None:
    raw = _exhausting_raw()
    reference = tmp_path / "reference.toml"
    asyncio.run(run_live(raw, lambda d: SCRIPTED, reference))
    whole = load_session(reference)
    saw = [(t.index, t.saw) for t in whole.turns]
    assert len(saw) == 18 and verify_file(reference).ok
    for stop in range(1, len(saw)):
        cut = tmp_path / f"stopped-after-{stop}.toml"
        _cut_after_turn(reference, cut, stop)
        resumed = LiveSession.resume(cut, lambda d: SCRIPTED)
        try:
            asyncio.run(resumed.engine.run())
        finally:
            resumed.close()
        again = load_session(cut)
        assert [(t.index, t.saw) for t in again.turns] == saw, f"stopped after turn {stop}"
        report = verify_file(cut)
        assert report.ok, (stop, [c.detail for c in report.failures])


def test_a_note_given_to_redo_a_cut_in_a_parallel_phase_verifies(tmp_path: Path) -> None:
    """The redo sees the note; the call already under way does not; both are on record."""
    choice = CutChoice(CutAction.REDO, note="Name the rollback first.")
    _, path = play(tmp_path, raw_spec(parallel=True), lambda e: Cutter(e, 2, choice, "b"))
    first, redone = load_session(path).turns[:2]
    assert first.saw == ["motion"] and redone.saw == ["motion", "note:1"]
    report = verify_file(path)
    assert report.ok, [c.detail for c in report.failures]


class _FailsOutOfOrder:
    """``c`` fails at once; ``b`` fails only after it, and ``a`` answers only after it.

    In time ``c`` fails first, but the schedule runs a, b, c: the record must say
    ``a`` spoke and ``b`` failed, whatever order the calls ended in.
    """

    def __init__(self) -> None:
        self.c_failed = asyncio.Event()

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        speaker = request.slot.speaker
        if speaker == "c":
            self.c_failed.set()
            raise ProviderError("server", "HTTP 500 from c's server")
        await self.c_failed.wait()
        if speaker == "b":
            raise ProviderError("server", "HTTP 500 from b's server")
        return await SCRIPTED.complete(request, on_token)

    async def aclose(self) -> None:
        return None


def test_a_provider_failure_in_a_parallel_phase_is_recorded_in_schedule_order(
    tmp_path: Path,
) -> None:
    raw = debate_raw({"a": ["release"], "b": ["revise"], "c": ["escalate"]}, max_rounds=1)
    provider = _FailsOutOfOrder()

    def provider_for(debater: Debater) -> _FailsOutOfOrder:
        return provider

    path = tmp_path / "failed.toml"
    asyncio.run(run_live(raw, provider_for, path))
    data = load_session(path)
    assert [t.speaker for t in data.turns] == ["a"]  # a's answer was not thrown away
    assert data.result is not None
    assert data.result["decision_rule"] == DecisionRule.PROVIDER_FAILURE
    assert data.result["failed_speaker"] == "b"
    assert "b's server" in data.result["failure"]
    report = verify_file(path)
    assert report.ok, [c.detail for c in report.failures]


async def test_every_call_of_a_parallel_phase_failing_over_http_verifies(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's case: a server answering HTTP 500 to three calls at once."""
    monkeypatch.setenv("MOOT_FAKE_TEST_KEY", "fake-secret-value-123456")
    fake.default = Status(500)
    served = {
        "model": "openai/fake",
        "api_base": fake.base_url,
        "api_key_env": "MOOT_FAKE_TEST_KEY",
        "timeout_s": 60,
    }
    raw = debate_raw({"a": ["release"], "b": ["revise"], "c": ["escalate"]}, max_rounds=1)
    raw["debaters"] = [{"id": d["id"], **served} for d in raw["debaters"]]
    provider = LiteLLMProvider(max_retries=1, backoff_base_s=0.01, backoff_max_s=0.05)
    path = tmp_path / "http500.toml"
    await run_live(raw, lambda d: provider, path)
    result = load_session(path).result
    assert result is not None and result["failed_speaker"] == "a"
    report = await asyncio.to_thread(verify_file, path)  # verify runs its own loop
    assert report.ok, [c.detail for c in report.failures]
