"""Which provider serves a debater: scripted, the embedded local model, the openai SDK, or LiteLLM.

An ``openai/`` model at one ``api_base`` is called through the ``openai`` SDK
(``tui.providers.openai_client``); every other model, and a list of servers
(the Router), through LiteLLM. Each turn records which client made its calls.
Importing this module imports none of LiteLLM, openai or xllamacpp; each is
loaded the first time a debater needs it.
"""

from __future__ import annotations

import threading
from typing import Any

from tui.engine.core.ports import Provider
from tui.engine.specs.spec import Debater
from tui.providers.scripted import ScriptedProvider

_lock = threading.Lock()
_scripted: ScriptedProvider | None = None
_local: Provider | None = None
_litellm: dict[tuple[Any, ...], Any] = {}


def _settings_key(debater: Debater) -> tuple[Any, ...]:
    return (
        debater.model,
        tuple(debater.api_base) if isinstance(debater.api_base, list) else debater.api_base,
        debater.api_key_env,
        debater.temperature,
        debater.max_tokens,
        debater.timeout_s,
    )


def provider_for(debater: Debater) -> Provider:
    """The shared provider for a debater's model (pass this to ``Engine``)."""
    global _scripted, _local
    model = debater.model
    with _lock:
        if model == "scripted":
            if _scripted is None:
                _scripted = ScriptedProvider()
            return _scripted
        if model == "local":
            if _local is None:
                from tui.providers.local import LocalProvider

                _local = LocalProvider()
            return _local
        key = _settings_key(debater)
        provider = _litellm.get(key)
        if provider is None:
            from tui.providers.openai_client import OpenAIClientProvider, takes

            if takes(debater):
                provider = _litellm[key] = OpenAIClientProvider()
            else:
                from tui.providers.litellm_provider import LiteLLMProvider

                provider = _litellm[key] = LiteLLMProvider()
        return provider


async def close_all(*, stop_local_model: bool = True) -> None:
    """Close every provider handed out, and stop the embedded model server."""
    global _scripted, _local
    with _lock:
        providers = [p for p in (_scripted, _local, *_litellm.values()) if p is not None]
        _scripted, _local = None, None
        _litellm.clear()
    for provider in providers:
        try:
            await provider.aclose()
        except Exception:  # closing is best effort
            pass
    import sys

    router = sys.modules.get("tui.providers.router")
    if router is not None:  # only if a debater ever spread its calls
        router.reset()
    if stop_local_model:
        local = sys.modules.get("tui.providers.local")
        if local is not None:  # only if it was ever used
            local.shutdown_local_model()
