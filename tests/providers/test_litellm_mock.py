"""LiteLLM's ``mock_response``: streaming assembly and token/cost accounting, offline."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tui.engine import Engine, validate_spec
from tui.engine.core.ports import ProviderError, TurnRequest
from tui.engine.core.records import CONTENT_MODELS
from tui.engine.core.schedule import Slot
from tui.engine.run.events import TokenReceived
from tui.engine.specs.spec import Debater
from tui.providers.litellm_lib import litellm_lib
from tui.providers.litellm_provider import LiteLLMProvider, classify

# One worker loads LiteLLM (7 s of CPU a process), the one running this group:
# tests/conftest.py fails a test outside it that uses LiteLLM.
pytestmark = pytest.mark.xdist_group("litellm")

TEXT = json.dumps(
    {
        "stance": "Ship the migration behind a feature flag this week.",
        "rationale": "The flag lets us roll back in seconds without a redeploy.",
        "vote": "release",
    }
)


def _request(model: str = "gpt-4o-mini", **debater: Any) -> TurnRequest:
    return TurnRequest(
        debater=Debater(id="a", model=model, **debater),
        slot=Slot(0, 1, "proposal", "a", "position"),
        messages=[
            {"role": "system", "content": "You are a debater. Answer in JSON."},
            {"role": "user", "content": "## Motion\nShip the migration now."},
        ],
        schema_name="Position",
        json_schema=CONTENT_MODELS["position"].model_json_schema(),
        votes=["release", "revise", "escalate"],
    )


def _mock(text: str = TEXT) -> LiteLLMProvider:
    return LiteLLMProvider(max_retries=0, extra_params={"mock_response": text})


async def test_streamed_tokens_join_to_the_full_text() -> None:
    chunks: list[str] = []
    reply = await _mock().complete(_request(), chunks.append)
    assert len(chunks) > 3  # really streamed, not one blob
    assert "".join(chunks) == reply.text == TEXT


async def test_tokens_and_cost_of_a_known_model() -> None:
    reply = await _mock().complete(_request("gpt-4o-mini"), None)
    assert reply.tokens_in > 0
    assert reply.tokens_out > 0
    in_cost, out_cost = litellm_lib().cost_per_token(
        model="gpt-4o-mini", prompt_tokens=reply.tokens_in, completion_tokens=reply.tokens_out
    )
    assert reply.cost > 0
    assert reply.cost == pytest.approx(in_cost + out_cost)
    assert reply.extra["structured"] == "json_schema"  # LiteLLM knows gpt-4o-mini takes one


async def test_unknown_model_costs_zero_and_never_raises() -> None:
    reply = await _mock().complete(_request("openai/not-a-real-model-xyz"), None)
    assert reply.text == TEXT
    assert reply.cost == 0.0
    assert reply.tokens_out > 0


async def test_cost_map_is_local() -> None:
    import os

    litellm_lib()
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


async def test_engine_records_tokens_and_cost_per_turn() -> None:
    raw = {
        "debate": {
            "title": "Mocked",
            "motion": "Ship the migration now.",
            "phases": ["proposal"],
            "max_rounds": 1,
        },
        "debaters": [{"id": "a", "model": "gpt-4o-mini"}, {"id": "b", "model": "gpt-4o-mini"}],
    }
    spec = validate_spec(raw)
    provider = _mock()
    tokens: dict[str, list[str]] = {"a": [], "b": []}
    engine = Engine(spec, lambda d: provider)
    engine.subscribe(
        lambda e: tokens[e.slot.speaker].append(e.text) if isinstance(e, TokenReceived) else None
    )
    decision = await engine.run()
    assert decision.decision == "release"
    assert all(not t.invalid and t.cost > 0 and t.tokens_out > 0 for t in engine.state.turns)
    result = engine.result()
    assert result["cost"] > 0
    assert result["tokens"] == sum(t.tokens_in + t.tokens_out for t in engine.state.turns)
    assert "".join(tokens["a"]) == "".join(tokens["b"]) == TEXT  # both streamed, in parallel


async def test_missing_key_variable_is_an_auth_error_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MOOT_MOCK_KEY", raising=False)
    with pytest.raises(ProviderError) as info:
        await _mock().complete(_request(api_key_env="MOOT_MOCK_KEY"), None)
    assert info.value.kind == "auth"
    assert "MOOT_MOCK_KEY" in info.value.message


async def test_mocked_rate_limit_is_retried_then_reported() -> None:
    litellm = litellm_lib()
    err = litellm.RateLimitError("too many requests", llm_provider="openai", model="gpt-4o-mini")
    assert classify(err) == "rate_limit"
    calls = 0

    async def boom(**kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        raise err

    provider = LiteLLMProvider(max_retries=2, backoff_base_s=0.001)
    orig = litellm.acompletion
    litellm.acompletion = boom
    try:
        with pytest.raises(ProviderError) as info:
            await provider.complete(_request(), None)
    finally:
        litellm.acompletion = orig
    assert calls == 3
    assert info.value.kind == "rate_limit"
    assert "after 3 attempts" in info.value.message


def test_classify_common_errors() -> None:
    litellm = litellm_lib()
    auth = litellm.AuthenticationError("bad key", llm_provider="openai", model="m")
    nf = litellm.NotFoundError("no model", llm_provider="openai", model="m")
    bad = litellm.BadRequestError("bad", model="m", llm_provider="openai")
    assert classify(auth) == "auth"
    assert classify(nf) == "not_found"
    assert classify(bad) == "bad_request"
    assert classify(TimeoutError()) == "timeout"
    assert classify(ConnectionRefusedError()) == "connection"
    assert classify(RuntimeError("?")) == "internal"
