"""Provider faults over real HTTP, through the real engine and session store.

A fake OpenAI-compatible server on loopback plays each fault; LiteLLM, and the
openai SDK client moot uses for ``openai/`` models at one ``api_base``, talk to it
as they would to a provider. Every fault runs through both and must end the same
way, as the exit codes in docs/commands.md say (a provider failure escalates, never a
traceback), and the session file must stay loadable.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import BadJSON, Cut, FakeOpenAI, Reply, Stall, Status
from tui.engine import Engine, validate_spec
from tui.engine.basics.errors import SpecError
from tui.engine.core.ports import ProviderError
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.providers.litellm_provider import RETRYABLE, LiteLLMProvider
from tui.providers.openai_client import OpenAIClientProvider

# One worker loads LiteLLM (7 s of CPU a process), the one running this group:
# tests/conftest.py fails a test outside it that uses LiteLLM.
pytestmark = pytest.mark.xdist_group("litellm")

KEY_ENV = "MOOT_FAKE_TEST_KEY"
KEY_VALUE = "fake-secret-value-123456"
VALID = json.dumps(
    {
        "stance": "Ship it behind a flag.",
        "rationale": "The flag bounds the risk.",
        "vote": "release",
    }
)
JUNK = "Sure! Here is my thinking, but not in JSON."
MAX_RETRIES = 3


@pytest.fixture(params=[LiteLLMProvider, OpenAIClientProvider], ids=["litellm", "openai"])
def cls(request: pytest.FixtureRequest) -> type[LiteLLMProvider]:
    """Each fault is played through both clients."""
    provider_class: type[LiteLLMProvider] = request.param
    return provider_class


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY_VALUE)


def _raw_spec(api_base: str, **debater: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "solo",
        "model": "openai/fake",
        "role": "Decides whether to ship.",
        "api_base": api_base,
        "api_key_env": KEY_ENV,
        "timeout_s": 60,
    }
    entry.update(debater)
    return {
        "debate": {
            "title": "Fault test",
            "motion": "Ship the migration now.",
            "protocol": "debate",
            "phases": ["proposal"],
            "max_rounds": 1,
        },
        "debaters": [entry],
    }


def _quick(cls: type[LiteLLMProvider]) -> LiteLLMProvider:
    return cls(max_retries=MAX_RETRIES, backoff_base_s=0.01, backoff_max_s=0.05)


async def _run(tmp_path: Path, raw: dict[str, Any], provider: LiteLLMProvider) -> tuple[Any, Path]:
    """Run a debate headless into a session file; return (result, path)."""
    spec = validate_spec(raw)
    live = LiveSession.start(spec, raw, lambda d: provider, out=tmp_path / "session.toml")
    try:
        await live.engine.run()
    finally:
        live.close()
        await provider.aclose()
    return live.engine, live.path


def _check_file(path: Path, engine: Engine) -> Any:
    """The session file loads, matches the run and holds no secret."""
    data = load_session(path)
    assert data.warnings == []
    assert len(data.turns) == len(engine.state.turns)
    assert data.result is not None and engine.decision is not None
    assert data.result["decision"] == engine.decision.decision
    assert data.result["decision_rule"] == engine.decision.rule
    assert KEY_VALUE not in path.read_text(encoding="utf-8")
    return data


async def test_429_then_success_gives_a_valid_turn(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.push(Status(429, "slow down"), Reply(VALID))
    engine, path = await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    assert fake.calls == 2
    [turn] = engine.state.turns
    assert not turn.invalid and turn.vote == "release" and turn.attempts == 1
    assert turn.tokens_in > 0 and turn.tokens_out > 0
    assert engine.decision.decision == "release"
    assert engine.decision.rule == "threshold_vote"
    assert fake.requests[-1]["authorization"] == f"Bearer {KEY_VALUE}"
    data = _check_file(path, engine)
    assert data.turns[0].content["stance"] == "Ship it behind a flag."
    assert data.turns[0].client == cls.client  # the file says which client made the calls
    report = await asyncio.to_thread(verify_file, path)  # verify runs its own loop
    assert report.ok, [c.detail for c in report.failures]


async def test_500_until_retries_run_out_is_a_provider_failure(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.default = Status(500, "upstream exploded")
    engine, path = await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    assert fake.calls == MAX_RETRIES + 1
    assert engine.decision.decision == "escalate"
    assert engine.decision.rule == "provider_failure"
    result = engine.result()
    assert result["failed_speaker"] == "solo"
    assert result["failure"].startswith("server:")
    assert "Traceback" not in result["failure"]
    assert engine.state.turns == []
    _check_file(path, engine)


async def test_stalled_stream_times_out(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.default = Stall(hang_s=30)
    provider = cls(max_retries=1, backoff_base_s=0.01)
    engine, path = await _run(tmp_path, _raw_spec(fake.base_url, timeout_s=0.5), provider)
    # Timeouts are retried, then given up. Counted by the provider, not the server: on a busy
    # machine half a second may pass before a request reaches the server at all.
    assert fake.calls <= 2
    assert engine.decision.decision == "escalate"
    assert engine.decision.rule == "provider_failure"
    failure = engine.result()["failure"]
    assert failure.startswith("timeout:") and "after 2 attempts" in failure
    _check_file(path, engine)


@pytest.mark.parametrize("broken", [Cut(), BadJSON()], ids=["cut", "bad-json"])
async def test_a_broken_stream_is_retried_then_a_valid_turn(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path, broken: Cut | BadJSON
) -> None:
    fake.push(broken, Reply(VALID))
    engine, path = await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    assert fake.calls == 2
    [turn] = engine.state.turns
    assert not turn.invalid and turn.vote == "release" and turn.attempts == 1
    assert turn.raw is None  # nothing of the broken stream is kept as the answer
    _check_file(path, engine)


@pytest.mark.parametrize("broken", [Cut(), BadJSON()], ids=["cut", "bad-json"])
async def test_a_stream_broken_every_time_is_a_provider_failure(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path, broken: Cut | BadJSON
) -> None:
    fake.default = broken
    engine, path = await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    assert fake.calls == MAX_RETRIES + 1  # retried as a transient fault, then given up
    assert engine.decision.decision == "escalate"
    assert engine.decision.rule == "provider_failure"
    failure = engine.result()["failure"]
    assert failure.split(":")[0] in RETRYABLE
    assert "Traceback" not in failure and "{" not in failure
    assert engine.state.turns == []
    _check_file(path, engine)


async def test_invalid_then_valid_json_is_one_valid_turn(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.push(Reply(JUNK), Reply(VALID))
    engine, path = await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    assert fake.calls == 2
    [turn] = engine.state.turns
    assert not turn.invalid
    assert turn.attempts == 2
    assert turn.vote == "release"
    # The re-ask carries the validation error and the rejected answer.
    reask = fake.requests[1]["body"]["messages"]
    assert reask[-2] == {"role": "assistant", "content": JUNK}
    assert "not accepted" in reask[-1]["content"]
    assert engine.state.tally()["release"] == 1
    _check_file(path, engine)


async def test_invalid_twice_is_recorded_invalid_and_not_counted(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.push(Reply(JUNK), Reply(JUNK + " Still no JSON."))
    engine, path = await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    assert fake.calls == 2
    [turn] = engine.state.turns
    assert turn.invalid is True
    assert turn.raw == JUNK + " Still no JSON."
    assert turn.vote is None
    assert sum(engine.state.tally().values()) == 0
    assert engine.decision.decision == "escalate"
    assert engine.decision.rule == "invalid_turn"
    data = _check_file(path, engine)
    assert data.turns[0].invalid is True
    assert data.turns[0].raw == JUNK + " Still no JSON."
    assert sum(data.result["vote_tally"].values()) == 0


async def test_401_is_not_retried_and_names_the_variable(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.default = Status(401, "invalid api key")
    engine, path = await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    assert fake.calls == 1
    assert engine.decision.decision == "escalate"
    assert engine.decision.rule == "provider_failure"
    failure = engine.result()["failure"]
    assert failure.startswith("auth:")
    assert KEY_ENV in failure
    assert KEY_VALUE not in failure
    _check_file(path, engine)


async def test_missing_key_variable_fails_before_any_call(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    engine, path = await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    assert fake.calls == 0
    assert engine.decision.rule == "provider_failure"
    failure = engine.result()["failure"]
    assert failure.startswith("auth:") and KEY_ENV in failure
    _check_file(path, engine)


async def test_404_is_not_found_without_retry(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.default = Status(404, "no such model")
    engine, _ = await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    assert fake.calls == 1
    assert engine.result()["failure"].startswith("not_found:")


async def test_connection_refused_is_a_provider_failure(
    cls: type[LiteLLMProvider], tmp_path: Path, refused_base: str
) -> None:
    closed = f"{refused_base}/v1"
    engine, path = await _run(tmp_path, _raw_spec(closed), _quick(cls))
    assert engine.decision.decision == "escalate"
    assert engine.decision.rule == "provider_failure"
    failure = engine.result()["failure"]
    assert failure.startswith("connection:")
    assert "Traceback" not in failure
    _check_file(path, engine)


async def test_registry_provider_reaches_the_fake_server(fake: FakeOpenAI) -> None:
    from tui.providers.registry import close_all, provider_for

    fake.push(Reply(VALID))
    raw = _raw_spec(fake.base_url)
    spec = validate_spec(raw)
    assert provider_for(spec.debaters[0]) is provider_for(spec.debaters[0])
    engine = Engine(spec, provider_for)
    decision = await engine.run()
    await close_all()
    assert decision.decision == "release"
    assert fake.calls == 1


@pytest.mark.parametrize(
    ("model", "api_base", "chosen"),
    [
        ("openai/fake", "http://127.0.0.1:9/v1", OpenAIClientProvider),
        ("openai/fake", ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"], LiteLLMProvider),
        ("ollama/fake", "http://127.0.0.1:9", LiteLLMProvider),
        ("gpt-4o-mini", None, LiteLLMProvider),
    ],
)
async def test_the_spec_chooses_the_client(model: str, api_base: Any, chosen: type) -> None:
    """openai/ at one api_base: the openai SDK; several servers or another provider: LiteLLM."""
    from tui.providers.registry import close_all, provider_for

    raw = _raw_spec(api_base, model=model)
    if api_base is None:
        del raw["debaters"][0]["api_base"]
    debater = validate_spec(raw).debaters[0]
    try:
        assert type(provider_for(debater)) is chosen
    finally:
        await close_all()


async def test_structured_output_is_requested_from_openai_compatible_servers(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    fake.push(Reply(VALID))
    await _run(tmp_path, _raw_spec(fake.base_url), _quick(cls))
    fmt = fake.requests[0]["body"]["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Position"
    assert "vote" in fmt["json_schema"]["schema"]["properties"]


async def test_schema_refused_steps_down_once_and_the_turn_says_so(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    """json_schema refused: json_object; refused too: the prompt alone; recorded per turn."""
    raw = _raw_spec(fake.base_url)
    raw["debaters"].append({**raw["debaters"][0], "id": "other"})
    raw["debate"].update(max_rounds=2, consensus_threshold=2, parallel=False)
    revise = VALID.replace('"release"', '"revise"')
    fake.push(
        Status(400, "response_format json_schema is not supported"),
        Reply(VALID),
        Status(400, "response_format json_object is not supported"),
        Reply(revise),
        Reply(VALID),
        Reply(revise),
    )
    engine, path = await _run(tmp_path, raw, _quick(cls))
    sent = [r["body"].get("response_format", {}).get("type") for r in fake.requests]
    assert sent == ["json_schema", "json_object", "json_object", None, None, None]
    turns = [(t.speaker, t.structured, t.invalid) for t in engine.state.turns]
    assert turns == [
        ("solo", "json_object", False),
        ("other", "prompt", False),
        ("solo", "prompt", False),
        ("other", "prompt", False),
    ]
    data = load_session(path)
    assert [t.structured for t in data.turns] == ["json_object", "prompt", "prompt", "prompt"]


@pytest.mark.parametrize(
    ("structured", "sent"),
    [("json_schema", "json_schema"), ("json_object", "json_object"), ("prompt", None)],
)
async def test_the_debaters_structured_mode_is_what_is_sent(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path, structured: str, sent: str | None
) -> None:
    fake.push(Reply(VALID))
    engine, _ = await _run(tmp_path, _raw_spec(fake.base_url, structured=structured), _quick(cls))
    assert fake.requests[0]["body"].get("response_format", {}).get("type") == sent
    assert engine.state.turns[0].structured == structured


async def test_a_chosen_mode_the_server_refuses_is_not_stepped_down(
    cls: type[LiteLLMProvider], fake: FakeOpenAI, tmp_path: Path
) -> None:
    """The spec asked for json_schema: a refusal is the server's answer, not a fallback."""
    fake.push(Status(400, "response_format json_schema is not supported"))
    engine, _ = await _run(
        tmp_path, _raw_spec(fake.base_url, structured="json_schema"), _quick(cls)
    )
    assert fake.calls == 1
    assert engine.decision.rule == "provider_failure"


def test_an_unknown_structured_mode_is_refused_by_key_path() -> None:
    with pytest.raises(SpecError) as info:
        validate_spec(_raw_spec("http://127.0.0.1:9/v1", structured="grammar"))
    assert any(p.startswith("debaters[0].structured:") for p in info.value.problems)


def test_provider_error_kinds_are_short_and_safe() -> None:
    err = ProviderError("server", "x failed (HTTP 500) after 4 attempts")
    assert str(err) == "server: x failed (HTTP 500) after 4 attempts"


@pytest.mark.parametrize(
    ("client", "servers", "holds"),
    [
        ("litellm", 1, True),  # LiteLLM reaches any model: the bench's --litellm runs verify
        ("openai", 2, False),  # several servers are the Router's: the SDK cannot have served
        ("grpc", 1, False),  # no such client
    ],
)
async def test_verify_checks_the_client_a_turn_names(
    fake: FakeOpenAI, tmp_path: Path, client: str, servers: int, holds: bool
) -> None:
    from tests.engine.test_verify_session import rewrite

    fake.push(Reply(VALID))
    _, path = await _run(tmp_path, _raw_spec(fake.base_url), _quick(OpenAIClientProvider))
    assert load_session(path).turns[0].client == "openai"
    assert (await asyncio.to_thread(verify_file, path)).ok

    def change(doc: dict[str, Any]) -> None:
        doc["turns"][0]["client"] = client
        if servers > 1:
            spec = doc["spec"]["debaters"][0]
            spec["api_base"] = [spec["api_base"], "http://127.0.0.1:9/v1"]

    rewrite(path, change)
    report = await asyncio.to_thread(verify_file, path)
    failed = {c.field for c in report.failures}
    assert ("client" not in failed) is holds
    assert failed <= {"client"}  # nothing else the rewrite touched is refused


@pytest.mark.parametrize("openai_key", [None, "sk-from-the-environment"])
async def test_the_key_sent_without_api_key_env_is_the_same_through_both_clients(
    cls: type[LiteLLMProvider],
    fake: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    openai_key: str | None,
) -> None:
    """No api_key_env: OPENAI_API_KEY if set (as LiteLLM reads it), else a placeholder."""
    if openai_key is None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    else:
        monkeypatch.setenv("OPENAI_API_KEY", openai_key)
    fake.push(Reply(VALID))
    raw = _raw_spec(fake.base_url)
    del raw["debaters"][0]["api_key_env"]
    engine, _ = await _run(tmp_path, raw, _quick(cls))
    assert engine.state.turns[0].vote == "release"
    assert fake.requests[0]["authorization"] == f"Bearer {openai_key or 'moot-no-key'}"
    assert fake.requests[0]["body"]["model"] == "fake"  # the openai/ prefix is LiteLLM's, not sent
