"""Preflight: every debater's model is checked before a session file exists.

A run that cannot reach a model should fail in seconds with the reason, not
after retries with a session file that holds nothing. Checked per debater: that
LiteLLM can route the model string, that the API key's variable is set (and long
enough to keep out of the record: ``keyvars.py``), that each ``api_base``
accepts a TCP connection. ``scripted`` needs nothing; ``local`` needs its GGUF
file. No request is sent to any model.

It also says where the spec's files will go (:func:`document_routes`): each file
document, and the servers of the debaters who may see it, so the person running
moot sees what leaves the machine before anything does.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from tui.engine.basics.clients import OPENAI_PREFIX
from tui.engine.core.ports import ProviderError
from tui.engine.grounding.context import ARTIFACT, may_see
from tui.engine.grounding.lookups import WRITES_FLAG
from tui.engine.specs.spec import Debater, Spec
from tui.providers.keyvars import short_key_problem
from tui.providers.litellm_lib import litellm_lib
from tui.providers.openai_client import KEY_ENV as OPENAI_KEY_ENV

CONNECT_TIMEOUT_S = 2.0
OLLAMA_PROVIDERS = ("ollama", "ollama_chat")
OLLAMA_BASE_ENV = "OLLAMA_API_BASE"
OLLAMA_DEFAULT_BASE = "http://localhost:11434"  # where LiteLLM calls ollama when nothing says
_DEFAULT_PORTS = {"http": 80, "https": 443}


def preflight(spec: Spec) -> list[str]:
    """One line per debater that cannot start (``id: reason; reason``); empty when all can."""
    env = os.environ
    found = {d.id: _debater_problems(d, env) for d in spec.debaters}
    servers = {
        d.id: _named_bases(d) if d.api_base is not None or found[d.id] else _default_server(d, env)
        for d in spec.debaters
    }
    urls = sorted({url for named in servers.values() for url, _ in named})
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(urls)))) as pool:
        refused = dict(zip(urls, pool.map(_connect_problem, urls), strict=True))
    lines = []
    for d in spec.debaters:
        reasons = found[d.id] + [
            f"{name} {why}" for url, name in servers[d.id] if (why := refused[url])
        ]
        if reasons:
            lines.append(f"{d.id}: {'; '.join(reasons)}")
    return lines + missing_commands(spec)


def missing_commands(spec: Spec) -> list[str]:
    """Each MCP tool whose command is not found (on PATH, or from the spec's folder)."""
    return [
        f"tools: {t.name!r}: command {t.mcp[0]!r} not found on PATH"
        for t in spec.tools
        if t.mcp is not None and shutil.which(t.mcp[0]) is None
    ]


def document_routes(spec: Spec) -> list[str]:
    """One line per server and the files it will be sent (inline text is the spec's own)."""
    routes: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for d in spec.debaters:
        files = tuple(
            dict.fromkeys(
                doc.path
                for doc in spec.documents
                if doc.path != "(inline)" and (doc.label == ARTIFACT or may_see(spec, doc, d.id))
            )
        )
        if not files:
            continue
        for server in _servers(d):
            routes.setdefault((server, files), []).append(d.id)
    return [
        f"sends {', '.join(files)} to {server} "
        f"({'debaters' if len(ids) > 1 else 'debater'} {', '.join(ids)})"
        for (server, files), ids in routes.items()
    ]


def _servers(d: Debater) -> list[str]:
    """Where this debater's prompts go: its api_base, the provider LiteLLM routes to, or here."""
    if d.model == "scripted":
        return []  # no model: nothing is sent
    if d.model == "local":
        return ["this machine's embedded model (nothing leaves it)"]
    if d.api_base is not None:
        return _bases(d)
    try:
        _, provider, _, base = litellm_lib().get_llm_provider(d.model)
    except Exception:
        return [f"the provider of {d.model} (LiteLLM's default endpoint)"]
    return [str(base)] if base else [f"{provider}'s API (LiteLLM's default endpoint)"]


def _bases(d: Debater) -> list[str]:
    if d.model in ("scripted", "local") or d.api_base is None:
        return []
    return [d.api_base] if isinstance(d.api_base, str) else list(d.api_base)


def _named_bases(d: Debater) -> list[tuple[str, str]]:
    return [(base, f"api_base {base}") for base in _bases(d)]


def _default_server(d: Debater, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """The server LiteLLM calls without an ``api_base`` when the user runs it themselves:
    ollama's (``OLLAMA_API_BASE``, else LiteLLM's default), or any default on this machine."""
    if d.model in ("scripted", "local"):
        return []
    try:
        _, provider, _, base = litellm_lib().get_llm_provider(d.model)
    except Exception:  # unroutable: already said
        return []
    if provider in OLLAMA_PROVIDERS:
        if env.get(OLLAMA_BASE_ENV):
            base, whence = env[OLLAMA_BASE_ENV], f"from {OLLAMA_BASE_ENV}; or set api_base"
        else:
            base = base or OLLAMA_DEFAULT_BASE
            whence = f"LiteLLM's default; set api_base or {OLLAMA_BASE_ENV}"
        return [(base, f"ollama's server {base} ({whence})")]
    host = urlsplit(str(base or "")).hostname
    if host and (host == "localhost" or _is_loopback_ip(host)):
        return [(str(base), f"{provider}'s server {base} (LiteLLM's default; set api_base)")]
    return []


def _is_loopback_ip(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _debater_problems(d: Debater, env: Mapping[str, str]) -> list[str]:
    if d.model == "scripted":
        return []
    if d.model == "local":
        from tui.providers.local import find_gguf

        try:
            find_gguf()
        except ProviderError as err:
            return [err.message]
        return []
    if d.api_key_env and not env.get(d.api_key_env, "").strip():
        state = "is empty" if d.api_key_env in env else "is not set"  # no LiteLLM needed
        return [f"environment variable {d.api_key_env} (api_key_env) {state}"]
    # LiteLLM routes every openai/ model: its key is checked with no import (seconds) first.
    route = None if d.model.startswith(OPENAI_PREFIX) else _route_problem(d)
    if route is not None:
        return [route]  # without a provider there is no key to look for
    short = short_key_problem(d.model, d.api_key_env, d.api_base, env)
    if short is not None:
        return [short]
    if d.api_key_env or d.api_base is not None:
        return []
    unset = _unset_key_vars(d.model, env)
    return (
        [f"{unset}: export the API key for {d.model} (or name its variable in api_key_env)"]
        if unset
        else []
    )


def _route_problem(d: Debater) -> str | None:
    """Why LiteLLM cannot tell which provider serves this model string, if it cannot."""
    litellm = litellm_lib()
    base = d.api_base if isinstance(d.api_base, str) else None
    try:
        litellm.get_llm_provider(d.model, api_base=base)
    except Exception:
        suggestion = _suggestion(litellm, d)
        return f'LiteLLM cannot route model "{d.model}": name its provider, e.g. "{suggestion}"'
    return None


def _suggestion(litellm: Any, d: Debater) -> str:
    """``provider/model`` from LiteLLM's own model lists, else the OpenAI-compatible prefix."""
    name = d.model.split("/", 1)[-1]
    for provider, models in getattr(litellm, "models_by_provider", {}).items():
        if name in models:
            return f"{provider}/{name}"
    return f"openai/{name}"


def _unset_key_vars(model: str, env: Mapping[str, str]) -> str | None:
    """Which of the provider's key variables lack a value: those LiteLLM names as absent,
    or the provider's own ``<PROVIDER>_API_KEY`` set but blank (LiteLLM counts it as set)."""
    if model.startswith(OPENAI_PREFIX):  # LiteLLM's answer, known without importing it
        provider, missing = "openai", [] if OPENAI_KEY_ENV in env else [OPENAI_KEY_ENV]
    else:
        litellm = litellm_lib()
        try:
            found = litellm.validate_environment(model)
            _, provider, _, _ = litellm.get_llm_provider(model)
        except Exception:  # LiteLLM cannot tell: the first call will say
            return None
        missing = [str(k) for k in found.get("missing_keys", []) if "KEY" in str(k).upper()]
    if missing and not any(env.get(k) for k in missing):
        return f"{' or '.join(missing)} is not set"
    own = f"{str(provider).upper()}_API_KEY"
    if own in env and not env[own].strip():
        return f"{own} is empty"
    return None


def _connect_problem(base: str) -> str | None:
    """Why ``base`` does not accept a TCP connection within the timeout (said after its name)."""
    parts = urlsplit(base)
    host = parts.hostname
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 80)
    except ValueError:
        return "has no valid port"
    if not host:
        return "names no host"
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return None
    except TimeoutError:
        reason = f"no answer within {CONNECT_TIMEOUT_S:g} s"
    except OSError as err:
        reason = err.strerror or type(err).__name__
    return f"does not accept a connection ({reason})"


def tool_calls(spec: Spec, writes: bool = False) -> list[str]:
    """One line per tool: who may call it and which calls, before any server starts.

    A lookup is a read (:func:`tui.engine.grounding.lookups.offer`): an MCP tool offers the calls
    its server marks read-only, within the spec's ``calls``; a listed call it does not
    mark may write, and is offered only with ``--allow-tool-writes`` (``writes``).
    """
    lines = []
    for t in spec.tools:
        who = ", ".join(t.roles)
        if t.builtin == "files":
            lines.append(f"tool {t.name}: {who} may list, read and grep {t.root} (reads only)")
        elif t.calls is None:
            lines.append(
                f"tool {t.name}: {who} may make the calls its server marks read-only; "
                "any other may write and is withheld"
            )
        elif writes:
            lines.append(
                f"tool {t.name}: {who} may make {', '.join(t.calls)}; those its server does "
                f"not mark read-only may write ({WRITES_FLAG})"
            )
        else:
            lines.append(
                f"tool {t.name}: {who} may make {', '.join(t.calls)} where its server marks "
                f"them read-only; the others may write and are withheld ({WRITES_FLAG} "
                "offers them)"
            )
    return lines
