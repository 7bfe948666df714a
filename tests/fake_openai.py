"""A fake OpenAI-compatible server on loopback for fault tests (no network, no key).

Each test queues behaviours; every request to ``/v1/chat/completions`` takes the
next one (or ``default`` when the queue is empty). It runs an aiohttp app on its
own event loop in a background thread, so the code under test talks to it over
real HTTP exactly as it would to a provider.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import web


@dataclass
class Reply:
    """A successful completion with this content (streamed if the request asked)."""

    content: str
    chunk_size: int = 8
    usage: dict[str, Any] | None = None  # what the server says the call used, if not counted


@dataclass
class Status:
    """An HTTP error with an OpenAI-style error body."""

    code: int
    message: str = "fake failure"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Stall:
    """Headers and one chunk, then silence for ``hang_s`` (past any sane timeout)."""

    first: str = '{"stance": '
    hang_s: float = 30.0


@dataclass
class Cut:
    """Headers and one chunk of ``first``, then the connection closed mid-stream."""

    first: str = '{"stance": '


@dataclass
class BadJSON:
    """Headers, one good chunk, then an SSE event whose data is not JSON, then [DONE]."""

    first: str = '{"stance": '
    junk: str = '{"choices": [{"delta": {"content": "x"'


@dataclass
class EchoAuth:
    """A completion whose content is ``template`` with the request's Authorization header
    in place of ``{authorization}``: a server that repeats the key it was sent."""

    template: str


Behaviour = Reply | Status | Stall | Cut | BadJSON | EchoAuth


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class FakeOpenAI:
    """Start with ``start()``; ``base_url`` is the ``api_base`` to give LiteLLM."""

    def __init__(self) -> None:
        self.queue: deque[Behaviour] = deque()
        self.default: Behaviour = Status(500, "no behaviour queued")
        self.requests: list[dict[str, Any]] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self._ready = threading.Event()

    # ----------------------------------------------------------- scripting
    def push(self, *behaviours: Behaviour) -> FakeOpenAI:
        self.queue.extend(behaviours)
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    # ------------------------------------------------------------- running
    def start(self) -> Self:
        self._thread = threading.Thread(target=self._run, name="fake-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start")
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
        try:
            fut.result(10)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(10)
            self._loop = None

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        loop.run_until_complete(self._startup())
        self._ready.set()
        loop.run_forever()
        loop.close()

    async def _startup(self) -> None:
        self._closing = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        self._runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]  # the bound socket tells the free port it took

    async def _shutdown(self) -> None:
        if self._closing is not None:
            self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()

    # ------------------------------------------------------------ handlers
    async def _chat(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await request.json()
        except json.JSONDecodeError:
            body = {}
        self.requests.append(
            {"body": body, "authorization": request.headers.get("Authorization", "")}
        )
        behaviour = self.queue.popleft() if self.queue else self.default
        if isinstance(behaviour, EchoAuth):
            header = request.headers.get("Authorization", "")
            behaviour = Reply(behaviour.template.replace("{authorization}", header))
        if isinstance(behaviour, Status):
            return web.json_response(
                {
                    "error": {
                        "message": behaviour.message,
                        "type": "fake_error",
                        "code": str(behaviour.code),
                    }
                },
                status=behaviour.code,
                headers=behaviour.headers,
            )
        model = body.get("model", "fake")
        if isinstance(behaviour, Stall):
            return await self._stall(request, model, behaviour)
        if isinstance(behaviour, Cut | BadJSON):
            return await self._broken(request, model, behaviour)
        if body.get("stream"):
            return await self._stream(request, model, behaviour, body)
        completion = _completion(model, behaviour.content, body)
        if behaviour.usage is not None:
            completion["usage"] = behaviour.usage
        return web.json_response(completion)

    async def _stream(
        self, request: web.Request, model: str, reply: Reply, body: dict[str, Any]
    ) -> web.StreamResponse:
        resp = await _sse_start(request)
        text = reply.content
        step = max(1, reply.chunk_size)
        await _sse(resp, _chunk(model, {"role": "assistant", "content": ""}))
        for i in range(0, len(text), step):
            await _sse(resp, _chunk(model, {"content": text[i : i + step]}))
        await _sse(resp, _chunk(model, {}, finish="stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = reply.usage or _usage(body, text)
            await _sse(resp, {**_chunk(model, {}), "choices": [], "usage": usage})
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def _broken(
        self, request: web.Request, model: str, broken: Cut | BadJSON
    ) -> web.StreamResponse:
        resp = await _sse_start(request)
        await _sse(resp, _chunk(model, {"role": "assistant", "content": broken.first}))
        if isinstance(broken, BadJSON):
            await resp.write(f"data: {broken.junk}\n\n".encode())
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
            return resp
        transport = request.transport
        assert transport is not None
        transport.abort()  # no finish, no [DONE], no chunked terminator: the stream is cut
        return resp

    async def _stall(self, request: web.Request, model: str, stall: Stall) -> web.StreamResponse:
        resp = await _sse_start(request)
        await _sse(resp, _chunk(model, {"role": "assistant", "content": stall.first}))
        assert self._closing is not None
        try:
            await asyncio.wait_for(self._closing.wait(), stall.hang_s)
        except TimeoutError:
            pass
        return resp


async def _sse_start(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse(
        status=200, headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    )
    await resp.prepare(request)
    return resp


async def _sse(resp: web.StreamResponse, data: dict[str, Any]) -> None:
    await resp.write(f"data: {json.dumps(data)}\n\n".encode())


def _chunk(model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _usage(body: dict[str, Any], text: str) -> dict[str, int]:
    prompt = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    completion = max(1, len(text.split()))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _completion(model: str, text: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(body, text),
    }
