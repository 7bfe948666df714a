"""Which client library a model call goes through, as a rule of the spec.

The providers follow this rule and each turn records the client that made its
calls (``client``). LiteLLM can reach any model, so a caller may use it where
the rule picks ``openai`` (the bench does, to compare); the SDK can reach only
an OpenAI-compatible server, so ``moot verify`` refuses ``openai`` anywhere else.
"""

from __future__ import annotations

OPENAI_PREFIX = "openai/"
OPENAI = "openai"  # the openai SDK's AsyncOpenAI, to one OpenAI-compatible server
LITELLM = "litellm"  # LiteLLM: every other provider, and the Router over several servers
CLIENTS = frozenset({OPENAI, LITELLM})


def client_for(model: str, api_base: str | list[str] | None) -> str:
    """``openai`` for an ``openai/`` model at exactly one ``api_base``; else ``litellm``."""
    return OPENAI if model.startswith(OPENAI_PREFIX) and isinstance(api_base, str) else LITELLM


def clients_for(model: str, api_base: str | list[str] | None) -> frozenset[str]:
    """The clients that can have made a call to ``model`` at ``api_base``."""
    return CLIENTS if client_for(model, api_base) == OPENAI else frozenset({LITELLM})
