"""Scale of ``moot batch``: many debates in one process, and a slow model server.

Run with ``.venv/bin/python bench/batch.py`` (``--sizes 10,100`` for a quick look).

1. For 10, 100 and 1,000 concurrent scripted debates (3 debaters, 2 rounds of
   the debate protocol's 4 phases, 24 turns each, every turn taking 50 ms so
   all of them are in flight at once), each size in a fresh process, sessions
   on tmpfs: wall time, turns per second, CPU time per debate, peak RSS and RSS
   per debate. Targets: CPU per debate flat from the smallest to the largest
   size (within 1.5x) and 1,000 debates under 1 GB.
2. The same with sessions on disk, where every turn is fsynced: the turn rate
   one process reaches is the disk's fsync rate.
3. 100 debates against an OpenAI-compatible server on loopback that answers
   every call after 200 ms, reporting usage as real servers do (run in its own
   process), through moot's providers (``openai/`` at one ``api_base``: the
   openai SDK; ``--litellm`` forces LiteLLM, for comparison in the same run):
   wall time against the ideal (every debate's phases back to back, nothing
   else) and the client's CPU per call, beside a bare ``openai.AsyncOpenAI``
   making the same calls in waves.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TURN_DELAY_MS = 50
ROUNDS = 2
LATENCY_S = 0.2
LATENCY_DEBATES = 100
LATENCY_ROUNDS = 3
TARGET_FLAT = 1.5
VOTE_OF = {"ada": "release", "brook": "revise", "cyrus": "escalate"}
TARGET_RSS_MB = 1024
TMPFS = "/dev/shm" if Path("/dev/shm").is_dir() else None
DISK_MAX = 100  # past this the disk rows only repeat the fsync rate, slowly


def _rss_kb(field: str) -> int:
    """VmRSS (now) or VmHWM (peak) of this process, in kB, from /proc."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def scripted_spec(n: int) -> dict[str, Any]:
    """Three debaters whose votes always split: the debate runs all its rounds."""
    return {
        "debate": {
            "title": f"Bench {n}",
            "motion": "Adopt trunk-based development.",
            "max_rounds": ROUNDS,
        },
        "debaters": [
            {
                "id": did,
                "model": "scripted",
                "script": {"votes": [vote], "turn_delay_ms": TURN_DELAY_MS},
            }
            for did, vote in VOTE_OF.items()
        ],
    }


def served_spec(n: int, base: str) -> dict[str, Any]:
    return {
        "debate": {
            "title": f"Served {n}",
            "motion": "Adopt trunk-based development.",
            "phases": ["proposal"],
            "max_rounds": LATENCY_ROUNDS,
        },
        "debaters": [
            {"id": did, "model": "openai/bench", "api_base": base, "api_key_env": "MOOT_BENCH_KEY"}
            for did in ("ada", "brook", "cyrus")
        ],
    }


async def _run_specs(raws: list[dict[str, Any]], folder: Path, litellm: bool) -> list[Any]:
    from tui.commands.batch import Item, run_items
    from tui.engine.specs.spec import validate_spec
    from tui.providers.litellm_provider import LiteLLMProvider
    from tui.providers.registry import close_all, provider_for

    forced = LiteLLMProvider()
    choose = (lambda d: forced) if litellm else provider_for
    items = [Item(f"bench-{i}", validate_spec(raw), raw) for i, raw in enumerate(raws)]
    try:
        await run_items(items, concurrency=len(items), directory=folder, provider_for=choose)
    finally:
        await close_all(stop_local_model=False)
    return items


def one_size(n: int, base: str | None, root: str | None, litellm: bool = False) -> dict[str, Any]:
    """Run ``n`` debates at once in this process; the figures as a dict."""
    import tui.commands.batch  # noqa: F401  (imports counted in the baseline, not per debate)
    import tui.providers.registry  # noqa: F401

    if base:
        from tui.providers.litellm_lib import litellm_lib

        litellm_lib()  # LiteLLM's import is a one-off, not a cost of the debates
        import openai  # noqa: F401  (so is the SDK's)
    raws = [served_spec(i, base) if base else scripted_spec(i) for i in range(n)]
    baseline = _rss_kb("VmRSS")
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        started = time.perf_counter()
        items = asyncio.run(_run_specs(raws, Path(tmp), litellm))
        wall = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    turns = sum(i.result.get("turns", 0) for i in items)
    phases = max((len(i.result.get("phase_sequence", [])) for i in items), default=0)
    peak = _rss_kb("VmHWM")
    return {
        "debates": n,
        "ok": sum(1 for i in items if i.status in ("decided", "unresolved")),
        "turns": turns,
        "wall_s": wall,
        "turns_per_s": turns / wall if wall else 0.0,
        "cpu_ms_per_debate": 1000 * cpu / n,
        "peak_rss_mb": peak / 1024,
        "rss_kb_per_debate": (peak - baseline) / n,
        "phases": phases,
    }


def bare_waves(base: str, calls: int, waves: int) -> dict[str, Any]:
    """The anchor: the same calls through a bare ``openai.AsyncOpenAI``, ``calls`` at a time.

    Each wave streams ``calls`` chat completions at once with the system prompt's
    speaker rotating as in the debates, and the next wave starts when all are done:
    the wall a client that does nothing but call would take, and its CPU per call.
    """
    import openai

    async def run() -> None:
        client = openai.AsyncOpenAI(base_url=base, api_key="bench", max_retries=0)

        async def one(i: int) -> None:
            who = ("ada", "brook", "cyrus")[i % 3]
            stream = await client.chat.completions.create(
                model="bench",
                messages=[
                    {"role": "system", "content": f"You are {who}, a debater."},
                    {"role": "user", "content": "Adopt trunk-based development? " * 40},
                ],
                stream=True,
                stream_options={"include_usage": True},
            )
            text = [c.choices[0].delta.content or "" async for c in stream if c.choices]
            json.loads("".join(text))

        for _ in range(waves):
            await asyncio.gather(*(one(i) for i in range(calls)))
        await client.close()

    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    asyncio.run(run())
    wall = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return {"wall_s": wall, "cpu_ms_per_call": 1000 * cpu / (calls * waves)}


def _child(
    n: int, root: str | None, base: str | None = None, litellm: bool = False
) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--one", str(n)] + (["--base", base] if base else [])
    cmd += ["--litellm"] if litellm else []
    cmd += ["--root", root] if root else []
    env = {**os.environ, "MOOT_BENCH_KEY": "bench-key", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench child failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# ------------------------------------------------------- the slow server
def serve(port_file: str, latency: float) -> None:
    """An OpenAI-compatible chat endpoint that answers each call after ``latency``."""
    from aiohttp import web

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        system = str(body["messages"][0].get("content", ""))
        who = system.split("You are ", 1)[-1].split(",", 1)[0]
        vote = VOTE_OF.get(who, "revise")  # the votes always split: every round is run
        text = json.dumps(
            {
                "stance": f"We should {vote} now.",
                "rationale": f"The case for {vote} holds.",
                "vote": vote,
            }
        )
        await asyncio.sleep(latency)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for delta, finish in (({"role": "assistant", "content": text}, None), ({}, "stop")):
            chunk = {
                "id": "bench",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": "bench",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
        usage = {"prompt_tokens": 400, "completion_tokens": 30, "total_tokens": 430}
        final = {"id": "bench", "object": "chat.completion.chunk", "created": int(time.time())}
        await resp.write(
            f"data: {json.dumps({**final, 'choices': [], 'usage': usage})}\n\n".encode()
        )
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", chat)
        runner = web.AppRunner(app, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
        await site.start()
        Path(port_file).write_text(str(runner.addresses[0][1]))
        await asyncio.Event().wait()

    asyncio.run(main())


def latency_run(litellm: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "port"
        server = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file)])
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists() or not port_file.read_text():
                if time.monotonic() > deadline:
                    raise SystemExit("the slow server did not start")
                time.sleep(0.05)
            base = f"http://127.0.0.1:{port_file.read_text()}/v1"
            moot = _child(LATENCY_DEBATES, TMPFS, base, litellm)
            calls = moot["turns"] // max(1, moot["phases"])
            cmd = [sys.executable, __file__, "--bare", f"{base},{calls},{moot['phases']}"]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            return {**moot, "bare": json.loads(done.stdout.strip().splitlines()[-1])}
        finally:
            server.terminate()
            server.wait(10)


def table(title: str, sizes: list[int], root: str | None) -> list[dict[str, Any]]:
    print(f"\n{title}")
    print(
        f"{'debates':>8} {'turns':>7} {'wall s':>8} {'turns/s':>9} {'cpu ms/deb':>11} "
        f"{'peak MB':>8} {'kB/deb':>8}"
    )
    rows = []
    for n in sizes:
        r = _child(n, root)
        rows.append(r)
        print(
            f"{r['debates']:>8} {r['turns']:>7} {r['wall_s']:>8.2f} {r['turns_per_s']:>9.0f} "
            f"{r['cpu_ms_per_debate']:>11.1f} {r['peak_rss_mb']:>8.0f} "
            f"{r['rss_kb_per_debate']:>8.0f}",
            flush=True,
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--no-latency", action="store_true")
    parser.add_argument("--no-disk", action="store_true")
    parser.add_argument("--latency-only", action="store_true", help="only the served debates")
    parser.add_argument("--litellm", action="store_true", help="served calls through LiteLLM")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--bare", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        base, calls, waves = args.bare.rsplit(",", 2)
        print(json.dumps(bare_waves(base, int(calls), int(waves))))
        return
    if args.serve:
        serve(args.serve, LATENCY_S)
        return
    if args.one:
        print(json.dumps(one_size(args.one, args.base, args.root, args.litellm)))
        return
    if args.latency_only:
        latency_report(args.litellm)
        return
    print(f"scripted debates, {TURN_DELAY_MS} ms per turn, all in flight at once, one process")
    sizes = [int(n) for n in args.sizes.split(",")]
    rows = table(f"sessions on tmpfs ({TMPFS})", sizes, TMPFS)
    cpu = [r["cpu_ms_per_debate"] for r in rows]
    print(
        f"CPU per debate, largest/smallest: {max(cpu) / min(cpu):.2f}x (target <= {TARGET_FLAT}x)"
    )
    print(
        f"peak RSS at {rows[-1]['debates']} debates: {rows[-1]['peak_rss_mb']:.0f} MB "
        f"(target < {TARGET_RSS_MB} MB)"
    )
    if not args.no_disk:
        table("sessions on disk (fsync per turn)", [n for n in sizes if n <= DISK_MAX], None)
    if not args.no_latency:
        latency_report(args.litellm)


def latency_report(litellm: bool) -> None:
    r = latency_run(litellm)
    ideal = r["phases"] * LATENCY_S
    print(
        f"\n{r['debates']} debates x {r['turns'] // r['debates']} turns against a loopback server "
        f"answering in {LATENCY_S * 1000:.0f} ms "
        f"({'LiteLLM' if litellm else 'moot providers'}, streaming, sessions on tmpfs):"
    )
    print(
        f"wall {r['wall_s']:.2f} s, ideal {ideal:.2f} s ({r['phases']} phases back to back): "
        f"{r['wall_s'] / ideal:.1f}x; {r['turns_per_s']:.0f} turns/s; "
        f"{r['cpu_ms_per_debate'] * r['debates'] / r['turns']:.0f} ms client CPU per call"
    )
    bare = r["bare"]
    per_call = r["cpu_ms_per_debate"] * r["debates"] / r["turns"]
    print(
        f"anchor, bare openai.AsyncOpenAI, the same {r['turns']} calls in {r['phases']} waves: "
        f"wall {bare['wall_s']:.2f} s (moot {r['wall_s'] / bare['wall_s']:.1f}x, target <= 2x); "
        f"{bare['cpu_ms_per_call']:.1f} ms client CPU per call "
        f"(moot {per_call / bare['cpu_ms_per_call']:.1f}x, target <= 2x)"
    )
    print(f"load average over the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
