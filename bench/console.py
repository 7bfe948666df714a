"""Console benchmarks: time to first paint, and streaming under load.

    .venv/bin/python bench/console.py [--runs 5] [--seconds 8]

1. First paint: spawns ``moot`` (``python -m tui``) in a pseudo-terminal and
   times from spawn until the home screen's text reaches the terminal.
2. Load: runs the console headless (Textual's test driver: full layout and
   rendering, no terminal) on 4 scripted debaters streaming 250 tokens/s each,
   and reports the token rate actually shown, the display lag, and the time from
   a key press (``p``) to the header showing the new state (p50/p95/max).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def first_paint(runs: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(
            os.environ,
            TERM="xterm-256color",
            MOOT_CONFIG_DIR=f"{tmp}/config",
            MOOT_SESSIONS_DIR=f"{tmp}/sessions",
            COLUMNS="160",
            LINES="45",
        )
        for _ in range(runs):
            master, slave = pty.openpty()
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
            t0 = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-m", "tui"],
                stdin=slave,
                stdout=slave,
                stderr=slave,
                env=env,
                cwd=REPO,
                close_fds=True,
            )
            os.close(slave)
            seen = b""
            painted = None
            deadline = t0 + 20
            while time.perf_counter() < deadline:
                ready, _, _ = select.select([master], [], [], 0.05)
                if ready:
                    try:
                        chunk = os.read(master, 65536)
                    except OSError:
                        break
                    seen += chunk
                    if b"Example" in seen and b"debates" in seen:
                        painted = time.perf_counter() - t0
                        break
            os.write(master, b"q")
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            os.close(master)
            if painted is None:
                print("  first paint: the home screen never appeared", file=sys.stderr)
            else:
                times.append(painted)
    return times


class PacedProvider:
    """Streams a position at a wall-clock rate, in bursts when the loop was busy.

    That is how a network stream behaves (tokens queue in the socket while the
    console renders), unlike a sleep per token, which slows down whenever the
    event loop is busy and so would hide a console that falls behind.
    """

    def __init__(self, rate: float) -> None:
        self.rate = rate

    async def complete(self, request, on_token):  # noqa: ANN001, ANN201
        import json
        import re

        from tui.engine.ports import TurnReply

        words = " ".join(f"word{i}" for i in range(240))
        vote = request.votes[int(request.debater.id[1:]) % 2]  # 2 release, 2 revise: no end
        text = json.dumps({"stance": words, "rationale": words, "vote": vote})
        tokens = re.findall(r"\S+\s*|\s+", text)
        start = time.perf_counter()
        sent = 0
        while sent < len(tokens):
            await asyncio.sleep(0.004)
            due = min(len(tokens), int((time.perf_counter() - start) * self.rate))
            while sent < due:
                if on_token is not None:
                    on_token(tokens[sent])
                sent += 1
        return TurnReply(text=text, tokens_out=len(tokens))

    async def aclose(self) -> None:
        return None


async def under_load(seconds: float) -> dict[str, float]:
    import tomli_w

    from tui.app.app import MootApp

    words = " ".join(f"word{i}" for i in range(240))
    spec = {
        "debate": {
            "title": "Load",
            "motion": "Stream as fast as a real model.",
            "max_rounds": 50,
            "phases": ["proposal"],
            "consensus_threshold": 4,
            "parallel": True,
        },
        "debaters": [
            {
                "id": f"d{i}",
                "model": "scripted",
                "family": f"f{i}",
                "script": {
                    "votes": [["release", "revise"][i % 2]],
                    "stances": [words],
                    "rationales": [words],
                    "token_delay_ms": 4.0,
                },
            }
            for i in range(4)
        ],
    }
    provider = PacedProvider(250.0)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MOOT_CONFIG_DIR"] = f"{tmp}/config"
        spec_path = Path(tmp) / "load.toml"
        spec_path.write_text(tomli_w.dumps(spec))
        app = MootApp(
            spec_path=str(spec_path),
            sessions_dir=f"{tmp}/sessions",
            provider_for=lambda d: provider,
        )
        latencies: list[float] = []
        lags: list[float] = []
        emitted = 0
        shown = 0
        async with app.run_test(size=(160, 45)) as pilot:
            while app.debate_screen() is None or app.debate_screen().engine is None:
                await asyncio.sleep(0.01)
            screen = app.debate_screen()
            original = screen._relay_engine_event
            stamps: dict[int, float] = {}

            def counting(event):
                nonlocal emitted
                if type(event).__name__ == "TokenReceived":
                    emitted += 1
                    stamps.setdefault(event.slot.index, time.perf_counter())
                original(event)

            listeners = screen.engine._bus._listeners
            listeners[listeners.index(original)] = counting
            handler = type(screen).on_tokens_arrived

            async def timed(self, message):
                nonlocal shown
                now = time.perf_counter()
                before = {index: len(chunks) for index, chunks in self._tokens.items()}
                await handler(self, message)
                for index, n in before.items():
                    kept = len(self._tokens.get(index, ()))  # held back until its pane is ready
                    shown += max(0, n - kept)
                    if kept < n and index in stamps:
                        lags.append(now - stamps.pop(index))

            type(screen).on_tokens_arrived = timed
            await asyncio.sleep(1.0)  # warm up: all four panes streaming
            start_emitted, start = emitted, time.perf_counter()
            cpu_start = time.process_time()
            header = screen.header
            end = start + seconds
            while time.perf_counter() < end:
                await asyncio.sleep(0.15)
                before = header.status
                if before not in ("LIVE", "PAUSED"):
                    break
                t0 = time.perf_counter()
                app.simulate_key("p")
                while header.status == before:
                    await asyncio.sleep(0.0005)
                    if time.perf_counter() - t0 > 2:
                        break
                latencies.append(time.perf_counter() - t0)
                if header.status == "PAUSED":  # resume at once: keep the load on
                    app.simulate_key("p")
                    while header.status == "PAUSED" and time.perf_counter() - t0 < 2:
                        await asyncio.sleep(0.0005)
            elapsed = time.perf_counter() - start
            cpu = (time.process_time() - cpu_start) / elapsed
            rate = (emitted - start_emitted) / elapsed
            type(screen).on_tokens_arrived = handler
            app.simulate_key("q")
            await pilot.pause(0.1)
    latencies.sort()
    lags.sort()
    q = lambda xs, p: xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")  # noqa: E731
    return {
        "token_rate": rate,
        "shown_fraction": shown / max(1, emitted),
        "lag_p95_ms": q(lags, 0.95) * 1000,
        "key_p50_ms": q(latencies, 0.50) * 1000,
        "key_p95_ms": q(latencies, 0.95) * 1000,
        "key_max_ms": (latencies[-1] if latencies else float("nan")) * 1000,
        "presses": len(latencies),
        "cpu": cpu,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    print("moot console benchmarks")
    paints = first_paint(args.runs)
    if paints:
        print(
            f"  first paint of `moot` (home screen, pty 160x45): median "
            f"{statistics.median(paints) * 1000:.0f} ms, best {min(paints) * 1000:.0f} ms, "
            f"worst {max(paints) * 1000:.0f} ms over {len(paints)} runs (target ≤ 400 ms)"
        )
    r = asyncio.run(under_load(args.seconds))
    target = 4 * 250
    keeps_up = r["token_rate"] >= 0.9 * target and r["lag_p95_ms"] < 250
    print(
        f"  4 panes × 250 tok/s: engine delivered {r['token_rate']:.0f} tok/s "
        f"(target {target}), shown {r['shown_fraction']:.0%} of tokens, display lag p95 "
        f"{r['lag_p95_ms']:.0f} ms → {'keeps up' if keeps_up else 'FALLS BEHIND'}; "
        f"the console used {r['cpu']:.0%} of a core (engine and providers included)"
    )
    print(
        f"  key press (p) to header change: p50 {r['key_p50_ms']:.1f} ms, p95 "
        f"{r['key_p95_ms']:.1f} ms, max {r['key_max_ms']:.1f} ms over {r['presses']} presses "
        "(target p95 ≤ 100 ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
