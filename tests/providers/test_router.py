"""Many model servers: a debater's api_base list spread by LiteLLM's Router, one server killed.

Two fake OpenAI-compatible servers on loopback; each answers as whichever
debater the prompt names, so the debate runs its full length (it never reaches
consensus) and every turn can be counted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import run_live
from tui.engine import validate_spec
from tui.engine.basics.errors import SpecError
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.engine.run.events import Event, TurnCompleted
from tui.providers.litellm_provider import LiteLLMProvider

# One worker loads LiteLLM (7 s of CPU a process), the one running this group:
# tests/conftest.py fails a test outside it that uses LiteLLM.
pytestmark = pytest.mark.xdist_group("litellm")

KEY_ENV = "MOOT_FAKE_ROUTER_KEY"
ROUNDS = 12  # 24 calls: a shuffle that leaves a server out is a 2**-23 chance


def position(vote: str) -> str:
    return json.dumps(
        {
            "stance": f"I hold that we should {vote} the plan now.",
            "rationale": f"The evidence so far points to {vote} for this plan.",
            "vote": vote,
        }
    )


class Debaters(FakeOpenAI):
    """Answers ``pro`` with release and ``con`` with revise, as the system prompt names them."""

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        system = str(body.get("messages", [{}])[0].get("content", ""))
        self.push(Reply(position("release" if "You are pro," in system else "revise")))
        return await super()._chat(request)


@pytest.fixture
def servers() -> Iterator[tuple[Debaters, Debaters]]:
    pair = (Debaters().start(), Debaters().start())
    try:
        yield pair
    finally:
        for server in pair:
            server.stop()


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "fake-router-key")


def spec_raw(bases: list[str]) -> dict[str, Any]:
    def debater(did: str) -> dict[str, Any]:
        return {
            "id": did,
            "model": "openai/fake",
            "api_base": bases,
            "api_key_env": KEY_ENV,
            "timeout_s": 60,
        }

    return {
        "debate": {
            "title": "Two servers",
            "motion": "Ship the migration now.",
            "phases": ["proposal"],
            "max_rounds": ROUNDS,
        },
        "debaters": [debater("pro"), debater("con")],
    }


def run(tmp_path: Path, raw: dict[str, Any], on_event: Any = None) -> Path:
    provider = LiteLLMProvider(max_retries=2, backoff_base_s=0.01, backoff_max_s=0.05)
    live = asyncio.run(run_live(raw, lambda d: provider, tmp_path / "session.toml", on_event))
    return live.path


def check_every_turn_valid(path: Path) -> None:
    data = load_session(path)
    assert data.result is not None
    assert (data.result["decision"], data.result["decision_rule"]) == (
        "escalate",
        "max_rounds_exhausted",
    )
    assert len(data.turns) == 2 * ROUNDS  # no turn lost
    assert all(not t.invalid and t.error is None and t.attempts == 1 for t in data.turns)
    assert {t.speaker: t.vote for t in data.turns} == {"pro": "release", "con": "revise"}
    assert verify_file(path).ok


def test_calls_spread_over_both_servers(servers: tuple[Debaters, Debaters], tmp_path: Path) -> None:
    a, b = servers
    path = run(tmp_path, spec_raw([a.base_url, b.base_url]))
    check_every_turn_valid(path)
    assert a.calls > 0 and b.calls > 0
    assert a.calls + b.calls == 2 * ROUNDS


def test_killing_one_server_mid_debate_loses_no_turn(
    servers: tuple[Debaters, Debaters], tmp_path: Path
) -> None:
    a, b = servers
    served_before: list[int] = []

    def kill_a_after_round_nine(event: Event) -> None:
        # The Router shuffles: after 18 calls both have served but for a 2**-17 chance
        # (after 6, one in 32 runs failed here).
        if isinstance(event, TurnCompleted) and event.turn.index == 18:
            served_before.extend([a.calls, b.calls])
            a.stop()  # its port now refuses connections

    path = run(tmp_path, spec_raw([a.base_url, b.base_url]), kill_a_after_round_nine)
    check_every_turn_valid(path)
    assert served_before[0] > 0 and served_before[1] > 0  # both served before the kill
    assert b.calls > served_before[1]  # the survivor served the rest


def test_a_server_refusing_connections_is_skipped(
    servers: tuple[Debaters, Debaters], tmp_path: Path, refused_base: str
) -> None:
    _, b = servers
    dead = f"{refused_base}/v1"
    path = run(tmp_path, spec_raw([dead, b.base_url]))
    check_every_turn_valid(path)
    assert b.calls == 2 * ROUNDS


def test_a_server_list_is_checked_entry_by_entry() -> None:
    with pytest.raises(SpecError) as err:
        validate_spec(spec_raw(["http://127.0.0.1:1/v1", "http://u:p@127.0.0.1:2/v1"]))
    assert any(
        p.startswith("debaters[0].api_base[1]: holds a credential") for p in err.value.problems
    )
    with pytest.raises(SpecError) as err:
        validate_spec(spec_raw(["http://127.0.0.1:1/v1", "http://127.0.0.1:1/v1"]))
    assert any("distinct servers" in p for p in err.value.problems)
    with pytest.raises(SpecError):
        validate_spec(spec_raw([]))
