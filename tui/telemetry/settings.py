"""Where traces go and what they carry: the environment first, then ``[telemetry]``.

Tracing is on only when the person running moot asked for it: an OTLP endpoint in
the environment (``OTEL_EXPORTER_OTLP_ENDPOINT``, set on the command line or in
their shell) or in their own config file::

    [telemetry]
    endpoint = "http://localhost:4318"  # like OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces)
    headers = { authorization = "Basic ..." }  # like OTEL_EXPORTER_OTLP_HEADERS
    timeout = 3.0                        # seconds, like OTEL_EXPORTER_OTLP_TIMEOUT
    capture_message_content = false      # like OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
    enabled = true                       # false keeps the table but sends nothing

Each setting the environment gives wins over the file's. The file's headers go
only to the file's endpoint: an endpoint from the environment never receives them.
``OTEL_SDK_DISABLED=true`` turns tracing off whatever the file says. Nothing here
imports OpenTelemetry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
TRACES_ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
ENDPOINT_ENVS = (ENDPOINT_ENV, TRACES_ENDPOINT_ENV)
HEADERS_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")
TIMEOUT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
DISABLED_ENV = "OTEL_SDK_DISABLED"
TABLE = "telemetry"
KEYS = ("enabled", "endpoint", "traces_endpoint", "headers", "timeout", "capture_message_content")
MAX_TIMEOUT_S = 600.0
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,200}$")  # an HTTP token


@dataclass(frozen=True, slots=True)
class Settings:
    """Resolved tracing settings. None fields are left to the exporter's own OTEL_* reading."""

    source: str  # "environment" or the config file's path: where the endpoint came from
    endpoint: str | None = None  # the full traces URL (…/v1/traces)
    headers: dict[str, str] | None = field(default=None, repr=False)  # may hold a key
    timeout: float | None = None
    capture: bool = False


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _url(value: Any, key: str, problems: list[str]) -> str | None:
    """An http(s) URL with a host; the value is never echoed (it may carry a password)."""
    if not isinstance(value, str):
        problems.append(f"{TABLE}.{key}: must be a string (an http:// or https:// URL)")
        return None
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        problems.append(f"{TABLE}.{key}: must be an http:// or https:// URL with a host")
        return None
    return value.strip()


def traces_url(base: str) -> str:
    """``OTEL_EXPORTER_OTLP_ENDPOINT``'s rule: the signal's path is appended to the base."""
    return base + ("v1/traces" if base.endswith("/") else "/v1/traces")


def _headers(value: Any, problems: list[str]) -> dict[str, str] | None:
    """Header names checked and named; their values (often keys) are never shown."""
    if not isinstance(value, dict):
        problems.append(f"{TABLE}.headers: must be a table of header names to strings")
        return None
    out: dict[str, str] = {}
    for name, text in value.items():
        where = f"{TABLE}.headers.{name}" if _HEADER_NAME.match(name) else f"{TABLE}.headers"
        if not _HEADER_NAME.match(name):
            problems.append(f"{where}: a header name has characters HTTP does not allow")
        elif not isinstance(text, str):
            problems.append(f"{where}: must be a string")
        elif "\n" in text or "\r" in text:
            problems.append(f"{where}: must be one line")
        else:
            out[name] = text
    return out


def from_file(table: Any, path: str) -> tuple[Settings | None, list[str]]:
    """The ``[telemetry]`` table alone: its settings (None when off) and its problems."""
    if not isinstance(table, dict):
        return None, [f"{TABLE}: must be a table ([{TABLE}])"]
    problems = [
        f"{TABLE}.{key}: unknown key (known: {', '.join(KEYS)})" for key in table if key not in KEYS
    ]
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        problems.append(f"{TABLE}.enabled: must be true or false")
    capture = table.get("capture_message_content", False)
    if not isinstance(capture, bool):
        problems.append(f"{TABLE}.capture_message_content: must be true or false")
    timeout = table.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT_S
    ):
        problems.append(f"{TABLE}.timeout: must be a number of seconds, over 0 and at most 600")
    endpoint = None
    if "traces_endpoint" in table:
        endpoint = _url(table["traces_endpoint"], "traces_endpoint", problems)
    if "endpoint" in table:
        base = _url(table["endpoint"], "endpoint", problems)
        if endpoint is None and base is not None:
            endpoint = traces_url(base)
    elif "traces_endpoint" not in table and enabled is True:
        problems.append(f"{TABLE}.endpoint: missing (where traces go, e.g. http://localhost:4318)")
    headers = _headers(table["headers"], problems) if "headers" in table else None
    if problems or enabled is not True:
        return None, problems
    return (
        Settings(
            source=path,
            endpoint=endpoint,
            headers=headers,
            timeout=float(timeout) if timeout is not None else None,
            capture=bool(capture),
        ),
        [],
    )


def resolve(
    env: Mapping[str, str], config: Mapping[str, Any], path: str
) -> tuple[Settings | None, list[str]]:
    """The settings in force (None: tracing off) and the config file's problems, if any.

    The environment wins key by key; the file's problems are reported even when the
    environment makes them moot, so a mistake in the file does not wait to bite.
    """
    if _truthy(env.get(DISABLED_ENV)):
        return None, []
    filed: Settings | None = None
    problems: list[str] = []
    if TABLE in config:
        filed, problems = from_file(config[TABLE], path)
    capture_env = env.get(CAPTURE_ENV)
    capture = (
        _truthy(capture_env) if capture_env else (filed.capture if filed is not None else False)
    )
    env_timeout = any(env.get(name) for name in TIMEOUT_ENVS)
    if any(env.get(name) for name in ENDPOINT_ENVS):
        # The exporter reads the endpoint, headers and timeout from the environment; the
        # file's headers (perhaps a key for another collector) are not sent there.
        timeout = None if env_timeout else (filed.timeout if filed is not None else None)
        return Settings("environment", timeout=timeout, capture=capture), problems
    if filed is None:
        return None, problems
    env_headers = any(env.get(name) for name in HEADERS_ENVS)
    return (
        Settings(
            source=filed.source,
            endpoint=filed.endpoint,
            headers=None if env_headers else filed.headers,
            timeout=None if env_timeout else filed.timeout,
            capture=capture,
        ),
        problems,
    )
