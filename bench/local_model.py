"""The embedded local model beside a bare llama.cpp server: same weights, threads, slots, run.

Run: .venv/bin/python bench/local_model.py [--turns 20] [--tokens 96]

moot's process-wide server (xllamacpp in this process, SmolLM2-135M or
MOOT_LOCAL_GGUF) is driven through ``LocalProvider``, the path a ``local``
debater takes: streamed, JSON-schema constrained, one slot per debater with
prompt caching. A bare llama.cpp server (xllamacpp in its own process, the same
parameters) gets the very same request bodies over plain HTTP, unstreamed. Turns
alternate between the two so both see the same load. One debater plays
``--turns`` turns whose context grows by each earlier answer, as in a debate;
greedy decoding makes both produce the same tokens.

Printed: tokens/s end to end for each (completion tokens over wall time, prompt
processing included) and their ratio, and llama.cpp's own prompt-processing
time at turn 1 and at the last turn, with how many prompt tokens came from the
slot's cache.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.llama_server import LlamaServer  # noqa: E402
from tui.engine.core.ports import TurnRequest  # noqa: E402
from tui.engine.core.records import CONTENT_MODELS  # noqa: E402
from tui.engine.core.schedule import Slot  # noqa: E402
from tui.engine.run.schemas import fit, kind_schema  # noqa: E402
from tui.engine.specs.spec import Debater  # noqa: E402
from tui.providers.local import (  # noqa: E402
    DEFAULT_CTX_PER_SLOT,
    DEFAULT_PARALLEL,
    LocalModelServer,
    LocalProvider,
    usable_cpus,
)

VOTES = ["release", "revise", "escalate"]
SYSTEM = (
    "You are planner, a participant in a structured debate. Your role: Argues for shipping "
    "now.\n\nTask: State your position on the motion, answering what was said before."
)
MOTION = "## Motion\nShip the database migration tonight without a rollback check."


def _post(url: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    t0 = time.perf_counter()
    with opener.open(req, timeout=900) as resp:
        data = json.loads(resp.read())
    return data, time.perf_counter() - t0


def _request(debater: Debater, turn: int, history: list[str], schema: dict[str, Any]) -> Any:
    earlier = "".join(f"\n\n## Your turn {i + 1}\n{text}" for i, text in enumerate(history))
    return TurnRequest(
        debater=debater,
        slot=Slot(turn, turn, "proposal", debater.id, "position"),
        messages=[
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": MOTION + earlier},
        ],
        schema_name="Position",
        json_schema=schema,
        votes=VOTES,
        speaker_turn=turn,
    )


async def run(turns: int, tokens: int) -> None:
    threads = usable_cpus()
    server = LocalModelServer.instance()
    server.start()
    bare = LlamaServer(slots=DEFAULT_PARALLEL, ctx_per_slot=DEFAULT_CTX_PER_SLOT, threads=threads)
    provider = LocalProvider(server)
    debater = Debater(id="planner", model="local", max_tokens=tokens, temperature=0.0)
    schema = fit(kind_schema(CONTENT_MODELS["position"], VOTES, min_words=3), tokens)
    print(f"model:   {server.model_path}")
    print(f"threads: {threads}   slots: {DEFAULT_PARALLEL} x {DEFAULT_CTX_PER_SLOT} tokens")
    print(f"turns:   {turns}, up to {tokens} tokens each, context growing by each answer\n")
    history: list[str] = []
    moot_tokens = bare_tokens = 0
    moot_wall = bare_wall = 0.0
    rows: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
    try:
        for turn in range(1, turns + 1):
            request = _request(debater, turn, history, schema)
            body = {**provider.body(request), "stream": False}
            body.pop("id_slot")  # the bare server picks its slot as llama.cpp does
            data, wall = _post(bare.api_base + "/chat/completions", body)
            bare_tokens += int(data["usage"]["completion_tokens"])
            bare_wall += wall
            t0 = time.perf_counter()
            reply = await provider.complete(request, None)
            moot_wall += time.perf_counter() - t0
            moot_tokens += reply.tokens_out
            history.append(reply.text)
            rows.append((turn, reply.extra, data.get("timings", {})))
    finally:
        await provider.aclose()
        bare.stop()
        LocalModelServer.shutdown_instance()
    moot_tps, bare_tps = moot_tokens / moot_wall, bare_tokens / bare_wall
    print(
        f"bare llama.cpp server: {bare_tokens:5d} tokens in {bare_wall:6.1f} s = {bare_tps:6.1f} tok/s"
    )
    print(
        f"moot local provider:   {moot_tokens:5d} tokens in {moot_wall:6.1f} s = {moot_tps:6.1f} tok/s"
    )
    print(f"moot / bare:           {moot_tps / bare_tps:.2f}x end to end\n")
    for turn, extra, timings in (rows[0], rows[-1]):
        print(
            f"turn {turn:2d}: moot prompt {extra['prompt_ms']:7.1f} ms for "
            f"{extra['prompt_tokens_read']} new tokens ({extra['prompt_tokens_cached']} cached); "
            f"bare {float(timings.get('prompt_ms', 0.0)):7.1f} ms "
            f"({timings.get('cache_n', 0)} cached)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=20, help="turns the debater plays")
    parser.add_argument("--tokens", type=int, default=96, help="max_tokens per turn")
    args = parser.parse_args()
    asyncio.run(run(args.turns, args.tokens))


if __name__ == "__main__":
    main()
