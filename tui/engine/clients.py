"""Which client library a model call goes through, as a rule of the spec.

The providers follow this rule and each turn records its answer (``client``);
``moot verify`` checks the record against it, so no path is taken unseen.
"""

from __future__ import annotations

OPENAI_PREFIX = "openai/"
OPENAI = "openai"  # the openai SDK's AsyncOpenAI, to one OpenAI-compatible server
LITELLM = "litellm"  # LiteLLM: every other provider, and the Router over several servers
CLIENTS = frozenset({OPENAI, LITELLM})


def client_for(model: str, api_base: str | list[str] | None) -> str:
    """``openai`` for an ``openai/`` model at exactly one ``api_base``; else ``litellm``."""
    return OPENAI if model.startswith(OPENAI_PREFIX) and isinstance(api_base, str) else LITELLM
