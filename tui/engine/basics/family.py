"""Model families, for the cross-family policy: who trained the model, roughly."""

from __future__ import annotations

_PREFIXES = (
    ("anthropic/", "anthropic"),
    ("claude", "anthropic"),
    ("openai/", "openai"),
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("gemini/", "google"),
    ("vertex_ai/", "google"),
    ("gemini-", "google"),
    ("mistral/", "mistral"),
    ("groq/", "groq"),
    ("deepseek/", "deepseek"),
    ("xai/", "xai"),
    ("ollama/", "ollama"),
    ("ollama_chat/", "ollama"),
    ("litellm_proxy/", "proxy"),
)


def family_of(model: str) -> str:
    """Best guess of a model string's family; the spec's ``family`` overrides it."""
    m = model.lower()
    if m in ("scripted", "local"):
        return m
    for prefix, family in _PREFIXES:
        if m.startswith(prefix):
            return family
    if "/" in m:
        return m.split("/", 1)[0]
    if "llama" in m:
        return "meta"
    if "qwen" in m:
        return "qwen"
    return m.split("-", 1)[0] or "unknown"
