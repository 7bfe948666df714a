"""Real models through LiteLLM: streaming, structured output, retries, cost.

LiteLLM is slow to import and would fetch a price list over the network unless
``LITELLM_LOCAL_MODEL_COST_MAP`` is set first, so it is imported lazily inside
the methods below, never when this module is imported.

The provider returns raw text only. Parsing, validation, the re-ask and the
``invalid`` verdict belong to the engine.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

from tui.engine.basics.clients import LITELLM
from tui.engine.basics.redact import redact
from tui.engine.core.ports import ProviderError, TokenSink, TurnReply, TurnRequest
from tui.engine.core.usage import CALL_TOKENS, CLAMPED, held
from tui.engine.specs.spec import Structured
from tui.providers.keyvars import short_key_problem
from tui.providers.litellm_lib import litellm_lib
from tui.providers.router import completion

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

DEFAULT_TIMEOUT_S = 60.0
RETRYABLE = frozenset({"rate_limit", "server", "timeout", "connection"})
# What to ask for next when a server refuses a structured-output mode.
FALLBACK: dict[Structured, Structured] = {"json_schema": "json_object", "json_object": "prompt"}
NO_KEY = "moot-no-key"
Base = str | tuple[str, ...] | None  # one server, or several behind the Router


def _status(err: BaseException) -> int | None:
    code = getattr(err, "status_code", None)
    if isinstance(code, int):
        return code
    response = getattr(err, "response", None)
    code = getattr(response, "status_code", None)
    return code if isinstance(code, int) else None


_NOISE = re.compile(r"^(litellm\.)?[A-Za-z]+(Error|Exception|Timeout)?:\s*", re.IGNORECASE)
_PROVIDER_PREFIX = re.compile(r"^[A-Za-z]+Exception\s*-\s*")


def _detail(err: BaseException, secret: str | None, limit: int = 160) -> str:
    """A short, single-line, secret-free gist of an exception's message."""
    text = str(getattr(err, "message", None) or err or type(err).__name__)
    text = " ".join(text.split())
    for _ in range(3):
        text = _PROVIDER_PREFIX.sub("", _NOISE.sub("", text, count=1), count=1)
    if secret:
        text = text.replace(secret, "[redacted]")
    if "Traceback" in text:
        text = text.split("Traceback", 1)[0].strip()
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text or type(err).__name__


_TIMEOUT_TEXT = re.compile(r"time(d)?[ -]?out", re.IGNORECASE)
_TIMEOUT_NAMES = frozenset(
    {
        "Timeout",
        "APITimeoutError",
        "TimeoutException",
        "ReadTimeout",
        "ConnectTimeout",
        "PoolTimeout",
        "WriteTimeout",
        "ServerTimeoutError",
        "TimeoutError",
    }
)
_CONNECTION_NAMES = frozenset(
    {
        "ConnectError",
        "ReadError",
        "WriteError",
        "RemoteProtocolError",
        "NetworkError",
        "ClientConnectorError",
        "ClientConnectionError",
        "ServerDisconnectedError",
        "ClientPayloadError",
        "ClientOSError",
        "ConnectionError",
        "APIConnectionError",
    }
)
_BAD_REQUEST_NAMES = frozenset(
    {
        "BadRequestError",
        "UnprocessableEntityError",
        "ContextWindowExceededError",
        "ContentPolicyViolationError",
        "UnsupportedParamsError",
        "InvalidRequestError",
    }
)


def _unwrap(err: BaseException) -> BaseException:
    """LiteLLM wraps mid-stream failures; the original exception says what happened."""
    for _ in range(5):
        inner = getattr(err, "original_exception", None)
        if not isinstance(inner, BaseException) or inner is err:
            break
        err = inner
    return err


def _chain(err: BaseException) -> list[BaseException]:
    """The exception, what LiteLLM wrapped, and its causes (LiteLLM re-raises a lot)."""
    out: list[BaseException] = []
    todo: list[BaseException] = [err]
    while todo and len(out) < 16:
        e = todo.pop(0)
        if any(e is seen for seen in out):
            continue
        out.append(e)
        for nxt in (getattr(e, "original_exception", None), e.__cause__, e.__context__):
            if isinstance(nxt, BaseException):
                todo.append(nxt)
    return out


def _names(err: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(err).__mro__}


def classify(err: BaseException) -> str:
    """Map a LiteLLM / OpenAI SDK / httpx / aiohttp / asyncio exception to a ProviderError kind.

    An HTTP answer (429, 401/403, 404, 400) is taken at its word; otherwise the
    causes decide: a timeout or a dropped/refused connection anywhere beneath
    the error wins over the generic 500 LiteLLM reports for them.
    """
    if isinstance(err, ProviderError):
        return err.kind
    top = _names(err)
    return (
        _answer_kind(top)
        or _cause_kind(top, _chain(err))
        or _status_kind(_status(err))
        or _bare_kind(err, top)
    )


def _answer_kind(top: set[str]) -> str | None:
    """The kind an error class names for a server's answer (a 429, 401/403, 404, 400)."""
    if "RateLimitError" in top:
        return "rate_limit"
    if top & {"AuthenticationError", "PermissionDeniedError"}:
        return "auth"
    if "NotFoundError" in top:
        return "not_found"
    if top & _BAD_REQUEST_NAMES:
        return "bad_request"
    return None


def _cause_kind(top: set[str], chain: list[BaseException]) -> str | None:
    """The kind the causes beneath the error name: a timeout or a connection first."""
    if any(isinstance(e, asyncio.TimeoutError) or _names(e) & _TIMEOUT_NAMES for e in chain):
        return "timeout"
    if any(_names(e) & _CONNECTION_NAMES for e in chain):
        return "timeout" if any(_TIMEOUT_TEXT.search(str(e)) for e in chain) else "connection"
    if top & {"InternalServerError", "ServiceUnavailableError", "BadGatewayError"}:
        return "server"
    if any(isinstance(e, json.JSONDecodeError) for e in chain):
        return "server"  # a streamed event that is not JSON: the server's answer is broken
    return None


_STATUS_KINDS = {429: "rate_limit", 401: "auth", 403: "auth", 404: "not_found", 408: "timeout"}


def _status_kind(status: int | None) -> str | None:
    """The kind the HTTP status an error carries names: besides those named, a 5xx is the
    server's and a 4xx the request's."""
    if status is None:
        return None
    if status in _STATUS_KINDS:
        return _STATUS_KINDS[status]
    if status >= 500:
        return "server"
    if 400 <= status < 500:
        return "bad_request"
    return None


def _bare_kind(err: BaseException, top: set[str]) -> str:
    """The kind of an error that names neither an answer, a cause nor a status."""
    if isinstance(err, OSError):
        return "connection"
    return "server" if "APIError" in top else "internal"


class LiteLLMProvider:
    """Any model LiteLLM knows, configured per debater (``api_base``, ``api_key_env`` ...).

    How the JSON answer is asked for (``json_schema``, ``json_object`` or
    ``prompt``) is the debater's ``structured``, else this provider's, else
    ``json_schema`` for any ``api_base`` and LiteLLM's knowledge of the model
    otherwise. A chosen-by-default mode the server refuses steps down once per
    server (json_schema, then json_object, then prompt); each reply says which
    mode it used, and the turn records it.
    """

    def __init__(
        self,
        *,
        max_retries: int = 3,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        structured: Structured | None = None,
        model: str | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        default_temperature: float | None = None,
        default_max_tokens: int | None = None,
        extra_params: Mapping[str, Any] | None = None,
    ) -> None:
        self.max_retries = max(0, max_retries)
        self.backoff_base_s = max(0.0, backoff_base_s)
        self.backoff_max_s = max(self.backoff_base_s, backoff_max_s)
        self.default_timeout_s = default_timeout_s
        self.structured = structured
        self._model = model
        self._api_base = api_base
        self._api_key = api_key
        self._default_temperature = default_temperature
        self._default_max_tokens = default_max_tokens
        self._extra = dict(extra_params or {})
        self._refused: dict[tuple[str, Base], Structured] = {}  # server: the mode it took

    client = LITELLM  # what made the calls; each reply says, and the turn records it

    # ------------------------------------------------------------ settings
    def _settings(self, request: TurnRequest) -> dict[str, Any]:
        d = request.debater
        model = self._model or d.model
        given = self._api_base or d.api_base  # several servers: a Router spreads the calls
        api_base = tuple(given) if isinstance(given, list) else given
        api_key = self._api_key
        if api_key is None and (
            short := short_key_problem(model, d.api_key_env, given, os.environ)
        ):
            raise ProviderError("auth", short)  # never sent, so no server can echo it
        if api_key is None and d.api_key_env:
            api_key = os.environ.get(d.api_key_env) or None
            if api_key is None:
                raise ProviderError(
                    "auth",
                    f"environment variable {d.api_key_env} is not set; set it to the API key "
                    f"for {model}",
                )
        if api_key is None and api_base and self._key_env(model) is not None:
            api_key = NO_KEY  # a self-hosted server checks no key; LiteLLM still wants one
        temperature = d.temperature if d.temperature is not None else self._default_temperature
        max_tokens = d.max_tokens if d.max_tokens is not None else self._default_max_tokens
        timeout = d.timeout_s if d.timeout_s is not None else self.default_timeout_s
        return {
            "model": model,
            "api_base": api_base,
            "api_key": api_key,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "timeout": float(timeout),
        }

    def _mode(self, request: TurnRequest, model: str, api_base: Base) -> Structured:
        chosen = request.debater.structured or self.structured
        if chosen is not None:
            return chosen
        if (model, api_base) in self._refused:
            return self._refused[(model, api_base)]
        if api_base:
            return "json_schema"
        lib = litellm_lib()
        try:
            if lib.supports_response_schema(model=model):
                return "json_schema"
            if "response_format" in (lib.get_supported_openai_params(model=model) or []):
                return "json_object"
        except Exception:  # a model LiteLLM does not know: the prompt carries the shape
            pass
        return "prompt"

    # --------------------------------------------------------------- calls
    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        s = self._settings(request)  # a missing key fails here, before any call
        mode = self._mode(request, s["model"], s["api_base"])
        chosen = request.debater.structured or self.structured
        attempt = 0
        while True:
            try:
                return await self._once(request, s, mode, on_token)
            except asyncio.CancelledError:
                raise
            except Exception as err:  # mapped below; nothing escapes unmapped
                kind = classify(err)
                lower = FALLBACK.get(mode)
                if kind == "bad_request" and lower and not chosen and _mentions_schema(err):
                    # This server does not take this mode: step down, once per server.
                    mode = self._refused[(s["model"], s["api_base"])] = lower
                    continue
                if kind in RETRYABLE and attempt < self.max_retries:
                    attempt += 1
                    await asyncio.sleep(self._backoff(attempt))
                    continue
                raise self._error(err, kind, request, s, attempt + 1) from None

    def _backoff(self, attempt: int) -> float:
        delay = min(self.backoff_max_s, self.backoff_base_s * (2.0 ** (attempt - 1)))
        return delay * (0.8 + 0.4 * random.random())

    async def _once(
        self,
        request: TurnRequest,
        s: dict[str, Any],
        mode: Structured,
        on_token: TokenSink | None,
    ) -> TurnReply:
        timeout = s["timeout"]
        # Deadlines by asyncio.timeout, never wait_for: on 3.11 a wait_for whose call ends in
        # the step its caller is cancelled returns the result and loses the cancellation
        # (a Ctrl+C as a chunk arrives), and the turn reads on from a stalled server.
        async with asyncio.timeout(timeout):
            stream = await self._open(_request_body(request, s, mode))
        parts: list[str] = []
        usage: Any = None
        iterator = stream.__aiter__()
        try:
            while True:
                try:
                    # An idle deadline per chunk: a stalled stream fails as a timeout.
                    async with asyncio.timeout(timeout):
                        chunk = await iterator.__anext__()
                except StopAsyncIteration:
                    break
                chunk_usage = getattr(chunk, "usage", None)
                if chunk_usage is not None:
                    usage = chunk_usage
                choices = getattr(chunk, "choices", None) or []
                if not choices:
                    continue
                delta = getattr(choices[0], "delta", None)
                text = getattr(delta, "content", None) if delta is not None else None
                if text:
                    parts.append(text)
                    if on_token is not None:
                        on_token(text)
        finally:
            await _close_stream(stream)
        text = "".join(parts)
        tokens_in, tokens_out, replaced = _usage_counts(usage)
        if not tokens_in:
            tokens_in = _count(litellm_lib(), s["model"], messages=request.messages)
        if not tokens_out and text:
            tokens_out = _count(litellm_lib(), s["model"], text=text)
        cost = self._price(s["model"], tokens_in, tokens_out)
        extra: dict[str, Any] = {"structured": mode, "client": self.client}
        if replaced:
            extra[CLAMPED] = replaced
        return TurnReply(
            text=text,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost=cost,
            extra=extra,
        )

    def _open(self, body: dict[str, Any]) -> Awaitable[Any]:
        """One streamed call through LiteLLM (or its Router for several servers), to await.

        Loading the library happens here, before the call's deadline starts.
        """
        litellm = litellm_lib()
        kwargs = {**body, "num_retries": 0, "max_retries": 0, "drop_params": True}
        return cast(Awaitable[Any], completion(litellm, {**kwargs, **self._extra}))

    # -------------------------------------------------------------- errors
    def _error(
        self,
        err: BaseException,
        kind: str,
        request: TurnRequest,
        s: dict[str, Any],
        attempts: int,
    ) -> ProviderError:
        if isinstance(err, ProviderError):
            return err
        model = s["model"]
        status = _status(_unwrap(err)) if kind not in ("timeout", "connection") else None
        http = f" (HTTP {status})" if status else ""
        tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}"
        base = s["api_base"]
        where = redact(", ".join(base) if isinstance(base, tuple) else base) if base else model
        if kind == "auth":
            env = request.debater.api_key_env or self._key_env(model)
            if env:
                hint = f"set the environment variable {env} to a valid key"
                if not request.debater.api_key_env:
                    hint += " (or name another variable in api_key_env)"
            else:
                hint = "name the environment variable holding the key in api_key_env"
            return ProviderError("auth", f"{model} refused the credentials{http}; {hint}")
        if kind == "not_found":
            return ProviderError("not_found", f"model {model} was not found at {where}{http}")
        if kind == "rate_limit":
            return ProviderError("rate_limit", f"{model} is rate limited{http}{tries}")
        if kind == "server":
            return ProviderError("server", f"{where} failed{http}{tries}")
        if kind == "timeout":
            limit = f"{s['timeout']:g}s"
            return ProviderError("timeout", f"no answer from {model} within {limit}{tries}")
        if kind == "connection":
            return ProviderError("connection", f"could not reach {where}{tries}")
        detail = _detail(err, s.get("api_key"))
        if kind == "bad_request":
            return ProviderError("bad_request", f"{model} rejected the request{http}: {detail}")
        return ProviderError("internal", f"{model}: {detail}")

    @staticmethod
    def _price(model: str, tokens_in: int, tokens_out: int) -> float:
        """A call's price, from LiteLLM's cost map."""
        return _cost(model, tokens_in, tokens_out)

    @staticmethod
    def _key_env(model: str) -> str | None:
        """The variable LiteLLM would read a key from for ``model``, when it is not set."""
        return _default_key_env(model)

    async def aclose(self) -> None:
        return None


def _mentions_schema(err: BaseException) -> bool:
    text = str(err).lower()
    return any(k in text for k in ("response_format", "json_schema", "schema", "structured"))


def _default_key_env(model: str) -> str | None:
    try:
        env = litellm_lib().validate_environment(model=model)
        missing = env.get("missing_keys") or []
        return str(missing[0]) if missing else None
    except Exception:
        return None


def _usage_counts(usage: Any) -> tuple[int, int, list[str]]:
    """The server's (prompt, completion) counts, 0 where not given; a count out of range
    (negative, past any model, not a whole number) is not given, and is named."""
    if usage is None:
        return 0, 0, []
    get: Callable[[str], Any] = (
        usage.get if isinstance(usage, dict) else lambda k: getattr(usage, k, None)
    )
    counts, replaced = [], []
    for key, name in (("prompt_tokens", "tokens_in"), ("completion_tokens", "tokens_out")):
        said = get(key)
        count = held(said, CALL_TOKENS) if isinstance(said, int) else 0
        if said is not None and count != said:
            replaced.append(name)  # counted here instead, as when the server says nothing
            count = 0
        counts.append(int(count))
    return counts[0], counts[1], replaced


def _request_body(request: TurnRequest, s: dict[str, Any], mode: Structured) -> dict[str, Any]:
    """The OpenAI-shaped chat request for one call: streamed, usage asked for, JSON by ``mode``."""
    body: dict[str, Any] = {
        "model": s["model"],
        "messages": request.messages,
        "stream": True,
        "stream_options": {"include_usage": True},
        "timeout": s["timeout"],
    }
    for key in ("api_base", "api_key", "temperature", "max_tokens"):
        if s[key] is not None:
            body[key] = s[key]
    if mode == "json_object":
        body["response_format"] = {"type": "json_object"}
    elif mode == "json_schema":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.schema_name,
                "schema": request.json_schema,
                "strict": False,
            },
        }
    return body


_UNPRICED: set[str] = set()  # models LiteLLM's cost map has no price for: never asked again


def _cost(model: str, tokens_in: int, tokens_out: int) -> float:
    """LiteLLM's price of a call; 0.0 for a model it cannot price (remembered, not re-raised)."""
    if model in _UNPRICED:
        return 0.0
    try:
        cin, cout = litellm_lib().cost_per_token(
            model=model, prompt_tokens=tokens_in, completion_tokens=tokens_out
        )
    except Exception:
        _UNPRICED.add(model)
        return 0.0
    cost = float(cin) + float(cout)
    return cost if cost >= 0 else 0.0


def _count(litellm: Any, model: str, **what: Any) -> int:
    try:
        return int(litellm.token_counter(model=model, **what))
    except Exception:
        text = what.get("text") or " ".join(m.get("content", "") for m in what.get("messages", []))
        return max(1, len(text) // 4) if text else 0


CLOSE_S = 1.0  # how long a turn, or the run's end, waits for an HTTP close
_closing: set[asyncio.Task[Any]] = set()  # closes still running after that, kept alive


async def close_within_bound(close: Awaitable[Any]) -> None:
    """Run ``close`` as a task of its own, waiting ``CLOSE_S`` at most, and leave it to finish.

    A close that defers its cancellation (the HTTP libraries shield theirs) would hold
    a cancelled turn for as long as it takes, which for a stalled server is for ever.
    """
    task = asyncio.ensure_future(close)
    _closing.add(task)
    task.add_done_callback(_closed)
    await asyncio.wait({task}, timeout=CLOSE_S)


def _closed(task: asyncio.Future[Any]) -> None:
    """Closing is best effort: its failure never masks the turn's real outcome."""
    _closing.discard(task)
    if not task.cancelled():
        task.exception()


async def _close_stream(stream: Any) -> None:
    """Release the HTTP response behind a stream, whatever ended it."""
    for target in (stream, getattr(stream, "completion_stream", None)):
        close = getattr(target, "aclose", None)
        if close is not None:
            await close_within_bound(close())
            return
