"""One OpenAI-compatible server, called through the ``openai`` SDK instead of LiteLLM.

A debater whose model is ``openai/NAME`` at one ``api_base`` (a llama.cpp
server, a LiteLLM proxy, ollama's /v1, vLLM ...) speaks the OpenAI chat API
already, so LiteLLM has nothing to translate. Its per-call work (the logging
task that re-assembles and prices every streamed call) was most of a call's
client CPU, so these calls go through ``AsyncOpenAI`` directly. Everything else
is the LiteLLM provider's: the settings, structured-output step-down, retries,
deadlines, error kinds, usage and cost (priced from LiteLLM's cost map, as there).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from typing import Any, cast

from tui.engine.basics.clients import OPENAI, OPENAI_PREFIX, client_for
from tui.engine.specs.spec import Debater
from tui.providers.litellm_provider import NO_KEY, LiteLLMProvider, close_within_bound
from tui.providers.prices import map_cost

KEY_ENV = "OPENAI_API_KEY"  # what LiteLLM reads for openai/ models when no key is named


def takes(debater: Debater) -> bool:
    """Whether this client serves the debater: ``openai/`` at exactly one ``api_base``."""
    return client_for(debater.model, debater.api_base) == OPENAI


class OpenAIClientProvider(LiteLLMProvider):
    """The LiteLLM provider's behaviour, with each call made by ``openai.AsyncOpenAI``."""

    client = OPENAI

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        # One HTTP client (its connection pool) per event loop, server and key: a pool's
        # connections belong to the loop that opened them.
        self._clients: dict[tuple[asyncio.AbstractEventLoop, str, str], Any] = {}

    @staticmethod
    def _price(model: str, tokens_in: int, tokens_out: int) -> float:
        return map_cost(model, tokens_in, tokens_out)  # LiteLLM's map, LiteLLM not imported

    @staticmethod
    def _key_env(model: str) -> str | None:
        return None if os.environ.get(KEY_ENV) else KEY_ENV

    def _client(self, base: str, key: str) -> Any:
        slot = (asyncio.get_running_loop(), base, key)
        client = self._clients.get(slot)
        if client is None:
            import openai

            client = self._clients[slot] = openai.AsyncOpenAI(
                base_url=base, api_key=key, max_retries=0
            )
        return client

    def _open(self, body: dict[str, Any]) -> Awaitable[Any]:
        """One streamed call, to await; the SDK's exceptions are classified as LiteLLM's are."""
        call = dict(body)
        base = call.pop("api_base")
        key = call.pop("api_key", None) or os.environ.get(KEY_ENV) or NO_KEY
        call["model"] = call["model"].removeprefix(OPENAI_PREFIX)
        if self._extra:
            call["extra_body"] = self._extra  # sent as is, as LiteLLM passes unknown params
        return cast(Awaitable[Any], self._client(base, key).chat.completions.create(**call))

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:  # best effort: a failed close is dropped (its loop may be gone)
            await close_within_bound(client.close())
