"""Which variables hold the key a debater's calls send, and which are too short to send.

The redactor replaces a known key value only from ``MIN_SECRET`` characters on
(replacing "a" or "none" would mangle ordinary text), so a shorter key that a
server echoes would be printed and written as it is. Such a key is never sent:
preflight names its variable before any file exists, and the provider refuses
the call whatever skipped the preflight.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tui.engine.basics.clients import OPENAI_PREFIX
from tui.engine.basics.redact import MIN_SECRET, SECRET_NAME
from tui.providers.litellm_lib import litellm_lib


def short_key_problem(
    model: str, api_key_env: str | None, api_base: Any, env: Mapping[str, str]
) -> str | None:
    """Why this debater's key is not sent (too short to keep out of the record), if so."""
    short = [n for n in key_variables(model, api_key_env, api_base, env) if _short(env[n])]
    if not short:
        return None
    names = " and ".join(short)
    fix = "set the whole key" if api_key_env else f"set the whole key, or unset {names}"
    return (
        f"{names} holds a key shorter than {MIN_SECRET} characters, too short to keep "
        f"out of what moot prints and writes, so it is never sent: {fix}"
    )


def key_variables(
    model: str, api_key_env: str | None, api_base: Any, env: Mapping[str, str]
) -> list[str]:
    """The set variables a call may send as the key: ``api_key_env``, else the provider's own."""
    if api_key_env:
        return [api_key_env] if api_key_env in env else []
    provider = _provider(model, api_base)
    if provider is None:
        return []
    prefix = _squeezed(provider)
    return sorted(n for n in env if SECRET_NAME.search(n) and _squeezed(n).startswith(prefix))


def _short(value: str) -> bool:
    return 0 < len(value) < MIN_SECRET


def _squeezed(name: str) -> str:
    """A provider or variable name compared loosely: ``together_ai`` is ``TOGETHERAI_...``."""
    return name.replace("_", "").replace("-", "").upper()


def _provider(model: str, api_base: Any) -> str | None:
    """The provider LiteLLM routes ``model`` to (whose variables it reads), if it can tell."""
    if model.startswith(OPENAI_PREFIX):
        return "openai"  # known without importing LiteLLM, as the openai client needs
    base = api_base if isinstance(api_base, str) else None
    try:
        _, provider, _, _ = litellm_lib().get_llm_provider(model, api_base=base)
    except Exception:  # unroutable: preflight says so, and no call is made
        return None
    return str(provider)
