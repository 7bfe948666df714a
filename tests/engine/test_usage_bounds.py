"""A server's numbers are held in range at the port, recorded as clamped, and verified.

A 201-digit token count once made the session file unreadable, and negative
usage let a run spend past ``[budget] max_tokens``. Every count a provider
reports is held to ``[0, bound]`` before it is charged or written, the turn says
which ones were, and ``moot verify`` refuses numbers the port would never let through.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_verify_session import rewrite
from tests.fake_openai import FakeOpenAI, Reply
from tests.helpers import SCRIPTED, debate_raw, run_live
from tui.engine.basics.vocab import DecisionRule
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.core.usage import CALL_COST, CALL_TOKENS
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.engine.specs.spec import Debater
from tui.providers.litellm_provider import LiteLLMProvider

# One worker loads LiteLLM (7 s of CPU a process), the one running this group:
# tests/conftest.py fails a test outside it that uses LiteLLM.
pytestmark = pytest.mark.xdist_group("litellm")

KEY_ENV = "MOOT_FAKE_TEST_KEY"
VALID = json.dumps(
    {
        "stance": "Ship it behind a flag.",
        "rationale": "The flag bounds the risk.",
        "vote": "release",
    }
)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "fake-secret-value-123456")


def _served(api_base: str, budget: dict[str, Any] | None = None, **debate: Any) -> dict[str, Any]:
    """``served`` answers through the fake server; ``scripted`` disagrees, so no consensus."""
    raw: dict[str, Any] = {
        "debate": {
            "title": "Usage test",
            "motion": "Ship the migration now.",
            "phases": ["proposal"],
            "consensus_threshold": 2,
            "parallel": False,
            **debate,
        },
        "debaters": [
            {
                "id": "served",
                "model": "openai/fake",
                "api_base": api_base,
                "api_key_env": KEY_ENV,
                "timeout_s": 60,
            },
            {"id": "scripted", "model": "scripted", "script": {"votes": ["revise"]}},
        ],
    }
    if budget is not None:
        raw["budget"] = budget
    return raw


def _providers() -> Any:
    provider = LiteLLMProvider(max_retries=0)
    return lambda d: SCRIPTED if d.model == "scripted" else provider


async def test_a_201_digit_token_count_leaves_a_readable_verified_file(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.default = Reply(VALID, usage={"prompt_tokens": 10**200, "completion_tokens": 7})
    path = tmp_path / "huge.toml"
    await run_live(_served(fake.base_url, max_rounds=1), _providers(), path)
    served = next(t for t in load_session(path).turns if t.speaker == "served")
    assert served.clamped == ["tokens_in"] and 0 < served.tokens_in <= CALL_TOKENS
    assert served.tokens_out == 7
    report = await asyncio.to_thread(verify_file, path)  # verify runs its own loop
    assert report.ok, [c.detail for c in report.failures]


async def test_negative_usage_does_not_defeat_the_token_budget(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.default = Reply(VALID, usage={"prompt_tokens": -(10**9), "completion_tokens": -(10**9)})
    path = tmp_path / "negative.toml"
    raw = _served(fake.base_url, max_rounds=40, budget={"max_tokens": 2_000})
    await run_live(raw, _providers(), path)
    data = load_session(path)
    assert data.result is not None
    assert data.result["decision_rule"] == DecisionRule.BUDGET_EXHAUSTED
    served = [t for t in data.turns if t.speaker == "served"]
    assert len(data.turns) < 80 and served
    for turn in served:  # counted here instead, and said so
        assert turn.clamped == ["tokens_in", "tokens_out"]
        assert turn.tokens_in > 0 and turn.tokens_out > 0
    report = await asyncio.to_thread(verify_file, path)  # verify runs its own loop
    assert report.ok, [c.detail for c in report.failures]


class _Wild:
    """A provider that reports numbers no call can have used."""

    def __init__(self, tokens_in: Any, tokens_out: Any, cost: Any) -> None:
        self.numbers = (tokens_in, tokens_out, cost)

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        reply = await SCRIPTED.complete(request, on_token)
        reply.tokens_in, reply.tokens_out, reply.cost = self.numbers
        reply.extra["context_window"] = -1
        return reply

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize(
    ("numbers", "kept", "clamped"),
    [
        ((10**200, -5, float("nan")), (CALL_TOKENS, 0, 0.0), ["cost", "tokens_in", "tokens_out"]),
        ((-(10**9), 3, float("inf")), (0, 3, 0.0), ["cost", "tokens_in"]),
        ((12, "many", 10**400), (12, 0, CALL_COST), ["cost", "tokens_out"]),
    ],
)
def test_every_number_a_provider_reports_is_held_at_the_port(
    tmp_path: Path, numbers: tuple[Any, ...], kept: tuple[Any, ...], clamped: list[str]
) -> None:
    wild = _Wild(*numbers)

    def provider_for(debater: Debater) -> _Wild:
        return wild

    path = tmp_path / "wild.toml"
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=1, phases=["proposal"])
    asyncio.run(run_live(raw, provider_for, path))
    for turn in load_session(path).turns:
        assert (turn.tokens_in, turn.tokens_out, turn.cost) == kept
        assert turn.clamped == sorted([*clamped, "context_window"])
    report = verify_file(path)
    assert report.ok, [c.detail for c in report.failures]


@pytest.mark.parametrize(
    ("field", "value"),
    [("tokens_in", -(10**9)), ("tokens_out", CALL_TOKENS * 10), ("cost", -1.0)],
)
def test_verify_refuses_a_count_the_port_never_lets_through(
    tmp_path: Path, field: str, value: Any
) -> None:
    path = tmp_path / "forged.toml"
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=1, phases=["proposal"])
    asyncio.run(run_live(raw, lambda d: SCRIPTED, path))

    def change(doc: dict[str, Any]) -> None:
        doc["turns"][0][field] = value

    rewrite(path, change)  # the chain re-sealed, as a forger would
    report = verify_file(path)
    assert [(c.where, c.field) for c in report.failures if c.field == "usage"] == [
        ("turn 1", "usage")
    ]


def test_verify_refuses_a_clamped_name_that_is_no_count(tmp_path: Path) -> None:
    path = tmp_path / "forged.toml"
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=1, phases=["proposal"])
    asyncio.run(run_live(raw, lambda d: SCRIPTED, path))
    rewrite(path, lambda doc: doc["turns"][1].update(clamped=["vote"]))
    report = verify_file(path)
    assert [(c.where, c.field) for c in report.failures] == [("turn 2", "usage")]
