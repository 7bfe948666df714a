"""Ctrl+C and SIGTERM end a headless run at once while a model server stalls mid-stream.

The server sends its headers and a first chunk, then nothing, for ever; the debater's
timeout is far past the test's deadline, so only the signal can end the turn. Closing
the stalled response must not hold the run up: the session is saved and the resume
line printed (exit 130), through the openai SDK and through LiteLLM alike.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp import web

from tests.fake_openai import FakeOpenAI, _chunk, _sse, _sse_start
from tests.signals import sigint_default
from tui.engine.basics.vocab import TurnKind
from tui.engine.core.ports import TurnRequest
from tui.engine.core.schedule import Slot
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.engine.specs.spec import Debater
from tui.exitcodes import ExitCode
from tui.providers.litellm_provider import LiteLLMProvider, _close_stream

ROOT = Path(__file__).resolve().parents[2]
KEY = {"MOOT_TEST_KEY": "k-test-stalled-0123456"}
DEADLINE_S = 20.0  # far below the debater's timeout_s: a timeout cannot be what ends the run

SPEC = """
[debate]
title = "Stalled mid-stream"
motion = "Leave at once when asked."
max_rounds = 2
consensus_threshold = 2
phases = ["proposal", "consensus"]
parallel = false

[[debaters]]
id = "a"
model = "scripted"
[debaters.script]
votes = ["release"]

[[debaters]]
id = "b"
model = "{model}"
api_base = {api_base}
api_key_env = "MOOT_TEST_KEY"
timeout_s = 300
"""


class StallsMidStream(FakeOpenAI):
    """Answers every chat request with headers and one chunk, then stalls until it stops."""

    def __init__(self) -> None:
        super().__init__()
        self.first_chunk_sent = threading.Event()

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.requests.append({"stalled": True})
        resp = await _sse_start(request)
        await _sse(resp, _chunk("fake", {"role": "assistant", "content": '{"stance": "'}))
        self.first_chunk_sent.set()
        assert self._closing is not None
        await self._closing.wait()
        return resp


@pytest.fixture
def stalling() -> Iterator[StallsMidStream]:
    server = StallsMidStream()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def stalled_run(tmp_path: Path, model: str, api_base: str) -> tuple[subprocess.Popen[str], Path]:
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(model=model, api_base=api_base))
    out = tmp_path / "stalled.toml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "tui", "run", str(spec), "--headless", "--no-preflight"]
        + ["--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **KEY},
        preexec_fn=sigint_default,
    )
    return proc, out


def wait_for_first_chunk(proc: subprocess.Popen[str], server: StallsMidStream) -> None:
    deadline = time.monotonic() + 120
    while not server.first_chunk_sent.wait(0.02):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            stdout, stderr = proc.communicate()
            raise AssertionError(f"the run never reached the stalled stream: {stdout}{stderr}")


def ended_within(proc: subprocess.Popen[str], seconds: float) -> tuple[str, str]:
    """The process's output once it ended by itself; a failure (and a kill) if it did not."""
    try:
        return proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        message = f"still running {seconds:g}s after the signal: {stdout}{stderr}"
        raise AssertionError(message) from None


CLIENTS = {
    "openai-sdk": ("openai/fake-model", "{base}"),  # openai/ at one api_base: the SDK
    "litellm": ("hosted_vllm/fake-model", "{base}"),  # any other provider: litellm.acompletion
    "litellm-router": ("openai/fake-model", "[{base}]"),  # a list of servers: LiteLLM's Router
}


# Each client once, each signal at least once: closing the stream is the client's part,
# the signal's handling one path for all (tests/commands/test_headless_output.py plays
# both signals on a turn a server holds).
@pytest.mark.parametrize(
    ("client", "sig"),
    [
        ("openai-sdk", signal.SIGTERM),
        ("litellm", signal.SIGINT),
        ("litellm-router", signal.SIGTERM),
    ],
    ids=["openai-sdk-SIGTERM", "litellm-SIGINT", "litellm-router-SIGTERM"],
)
def test_a_signal_ends_a_run_stalled_mid_stream(
    tmp_path: Path, stalling: StallsMidStream, sig: signal.Signals, client: str
) -> None:
    """The LiteLLM cases earn their time (8 to 12 s in a full run): the run is a process of
    its own that imports LiteLLM, about 5 s of CPU, since the signal must reach a real
    ``moot run``; one case for each client moot reaches a server through."""
    model, api_base = CLIENTS[client]
    api_base = api_base.format(base=f'"{stalling.base_url}"')
    proc, out = stalled_run(tmp_path, model, api_base)
    wait_for_first_chunk(proc, stalling)
    proc.send_signal(sig)
    stdout, stderr = ended_within(proc, DEADLINE_S)
    assert proc.returncode == ExitCode.INTERRUPTED, stdout + stderr
    assert "Traceback" not in stderr
    assert f"moot resume {out}" in stderr
    assert verify_file(out).ok
    assert [t.speaker for t in load_session(out).turns] == ["a"]  # the stalled turn is not


def test_closing_a_stalled_stream_is_bounded_when_the_close_never_returns() -> None:
    """A response whose close shields itself from cancellation cannot hold the turn."""

    class NeverCloses:
        """Defers every cancellation until released, as a shielded cancel scope does."""

        def __init__(self) -> None:
            self.released = asyncio.Event()

        async def aclose(self) -> None:
            while not self.released.is_set():
                try:
                    await self.released.wait()
                except asyncio.CancelledError:
                    continue

    async def main() -> None:
        stream = NeverCloses()
        closing = asyncio.ensure_future(_close_stream(stream))
        try:
            done, _ = await asyncio.wait({closing}, timeout=DEADLINE_S)
            assert closing in done, "closing the stream waited on a close that never returns"
        finally:
            stream.released.set()

    asyncio.run(main())


class CancelledAsAChunkArrives:
    """A stream whose second chunk arrives in the same step as the call's cancellation (a
    signal handled while the chunk is read), and which then stalls for ever."""

    def __init__(self) -> None:
        self.owner: asyncio.Task[Any] | None = None
        self.read = 0

    def __aiter__(self) -> CancelledAsAChunkArrives:
        return self

    async def __anext__(self) -> Any:
        self.read += 1
        if self.read == 2:
            assert self.owner is not None
            self.owner.cancel()
        elif self.read > 2:
            await asyncio.get_running_loop().create_future()  # never answered
        delta = SimpleNamespace(content='{"stance": ')
        return SimpleNamespace(choices=[SimpleNamespace(delta=delta)], usage=None)


class Streams(LiteLLMProvider):
    def __init__(self, stream: CancelledAsAChunkArrives) -> None:
        super().__init__(api_key="k-test-stalled-0123456", max_retries=0)
        self.stream = stream

    def _open(self, body: dict[str, Any]) -> Awaitable[Any]:
        async def opened() -> CancelledAsAChunkArrives:
            return self.stream

        return opened()


def test_a_cancellation_that_meets_a_chunk_is_never_lost() -> None:
    """The call ends cancelled, however its cancellation and a chunk's arrival interleave."""
    debater = Debater(id="b", model="openai/fake", api_base="http://127.0.0.1:9/v1", timeout_s=300)
    slot = Slot(index=1, round=1, phase="proposal", speaker="b", kind=TurnKind.POSITION)
    request = TurnRequest(
        debater=debater,
        slot=slot,
        messages=[{"role": "user", "content": "Ship it?"}],
        schema_name="turn",
        json_schema={"type": "object"},
        votes=["release"],
    )

    async def main() -> None:
        stream = CancelledAsAChunkArrives()
        call = stream.owner = asyncio.ensure_future(Streams(stream).complete(request, None))
        done, _ = await asyncio.wait({call}, timeout=DEADLINE_S)
        if call not in done:
            call.cancel()  # let the loop end
        assert call in done, "the cancellation was lost: the call read on from a stalled stream"
        assert call.cancelled()

    asyncio.run(main())
