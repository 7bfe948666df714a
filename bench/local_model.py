"""Tokens per second of the embedded local model (DESIGN.md target: >= 100 tok/s single stream).

Run: .venv/bin/python bench/local_model.py [--tokens N] [--runs N]

Starts moot's process-wide llama.cpp server (xllamacpp, SmolLM2-135M by default,
or MOOT_LOCAL_GGUF) and measures generation over its OpenAI-compatible HTTP API,
the path debaters use: one stream alone, then three streams at once (three
debaters in one phase). Figures: decode rate from the server's own timings, and
end-to-end rate (completion tokens / wall time, prompt processing included).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tui.engine  # noqa: E402,F401  (import order: the engine before its providers)
from tui.engine.records import CONTENT_MODELS  # noqa: E402
from tui.engine.schemas import kind_schema  # noqa: E402
from tui.providers.local import LocalModelServer, local_schema  # noqa: E402

SYSTEM = (
    "You are planner, a participant in a structured debate. Your role: Argues for "
    "shipping now.\n\nPhase: proposal (round 1).\nTask: State your opening position on "
    "the motion. Be concrete: name the decision you favour, the strongest reason for it, "
    "and the main risk you accept."
)
USER = "## Motion\nShip the database migration tonight without a rollback check."


def _post(url: str, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    t0 = time.perf_counter()
    with opener.open(req, timeout=600) as resp:
        data = json.loads(resp.read())
    return data, time.perf_counter() - t0


def _body(tokens: int, structured: bool, seed: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "local",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        "max_tokens": tokens,
        "temperature": 0.2,
        "seed": seed,
        "cache_prompt": False,
    }
    if structured:
        schema = local_schema(kind_schema(CONTENT_MODELS["position"], ["release", "revise"]), 384)
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "Position", "schema": schema, "strict": False},
        }
    else:
        body["ignore_eos"] = True  # a fixed-length generation: a clean decode figure
    return body


def _one(url: str, body: dict[str, Any]) -> dict[str, float]:
    data, wall = _post(url, body)
    n = int(data["usage"]["completion_tokens"])
    timings = data.get("timings", {})
    return {
        "tokens": n,
        "wall": wall,
        "decode_tps": float(timings.get("predicted_per_second", 0.0)),
        "e2e_tps": n / wall if wall else 0.0,
    }


def _concurrent(url: str, bodies: list[dict[str, Any]]) -> tuple[list[dict[str, float]], float]:
    results: list[dict[str, float] | None] = [None] * len(bodies)

    def work(i: int) -> None:
        results[i] = _one(url, bodies[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(bodies))]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return [r for r in results if r is not None], wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=200, help="tokens per generation")
    parser.add_argument("--runs", type=int, default=3, help="repetitions of each measurement")
    args = parser.parse_args()

    server = LocalModelServer.instance()
    t0 = time.perf_counter()
    server.start()
    start_s = time.perf_counter() - t0
    url = server.api_base + "/chat/completions"
    print(f"model:     {server.model_path}")
    print(f"cpus:      {os.cpu_count()}   slots: {server.n_parallel}   startup: {start_s:.2f} s")
    _one(url, _body(16, False, 0))  # warm-up

    for structured in (False, True):
        label = "JSON-schema turn" if structured else f"plain text, {args.tokens} tokens"
        print(f"\n== {label} ==")
        singles = [_one(url, _body(args.tokens, structured, i)) for i in range(args.runs)]
        dec = statistics.median(r["decode_tps"] for r in singles)
        e2e = statistics.median(r["e2e_tps"] for r in singles)
        toks = statistics.median(r["tokens"] for r in singles)
        print(
            f"single stream:    decode {dec:7.1f} tok/s   end-to-end {e2e:7.1f} tok/s"
            f"   ({toks:.0f} tokens/turn, median of {args.runs})"
        )
        aggs, pers, decs = [], [], []
        for run in range(args.runs):
            bodies = [_body(args.tokens, structured, 100 * run + k) for k in range(3)]
            results, wall = _concurrent(url, bodies)
            aggs.append(sum(r["tokens"] for r in results) / wall)
            pers.extend(r["e2e_tps"] for r in results)
            decs.extend(r["decode_tps"] for r in results)
        print(
            f"three at once:    aggregate {statistics.median(aggs):7.1f} tok/s   "
            f"per stream end-to-end {statistics.median(pers):6.1f} tok/s   "
            f"per stream decode {statistics.median(decs):6.1f} tok/s"
        )

    LocalModelServer.shutdown_instance()


if __name__ == "__main__":
    main()
