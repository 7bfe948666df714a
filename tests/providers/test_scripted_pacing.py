"""A scripted debater's ``token_delay_ms`` paces its tokens for a watcher only.

The console streams them (its provider is paced); a headless run, a batch or an MCP run
shows no tokens, so waiting there would only slow the run. Counted by the sleeps taken,
never by a clock.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.helpers import debate_raw
from tui.app.app import _Providers
from tui.engine import Engine, validate_spec
from tui.engine.run.events import Event, TokenReceived
from tui.providers.registry import provider_for
from tui.providers.scripted import ScriptedProvider


def _raw() -> dict[str, Any]:
    return debate_raw({"a": ["release"], "b": ["release"]}, max_rounds=1, phases=["proposal"])


def _play(provider: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[list[float], int]:
    """Play a one-turn-each debate whose debaters pace tokens at 7 ms and turns at 3 ms;
    return the sleeps the provider took and the tokens the bus carried."""
    raw = _raw()
    for d in raw["debaters"]:
        d["script"].update(token_delay_ms=7, turn_delay_ms=3)
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def counted(delay: float) -> None:
        slept.append(delay)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", counted)  # the module the provider sleeps through
    engine = Engine(validate_spec(raw), lambda _d: provider)
    tokens: list[Event] = []
    engine.subscribe(lambda e: tokens.append(e) if isinstance(e, TokenReceived) else None)
    asyncio.run(engine.run())
    assert len(engine.state.turns) == 2
    return slept, len(tokens)


def test_headless_providers_wait_for_turns_but_not_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    debater = validate_spec(_raw()).debaters[0]
    provider = provider_for(debater)  # what `moot run --headless`, batches and MCP runs use
    slept, tokens = _play(provider, monkeypatch)
    assert slept.count(0.003) == 2 and 0.007 not in slept  # each turn's delay, no token's
    assert tokens == 2  # each answer reaches the bus whole


def test_the_console_paces_every_token(monkeypatch: pytest.MonkeyPatch) -> None:
    debater = validate_spec(_raw()).debaters[0]
    provider = _Providers()(debater)
    assert isinstance(provider, ScriptedProvider) and provider.paced
    slept, tokens = _play(provider, monkeypatch)
    assert slept.count(0.003) == 2
    assert slept.count(0.007) == tokens > 2  # one wait before each token streamed
