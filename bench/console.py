"""Console benchmarks: time to first paint, and streaming under load.

    .venv/bin/python bench/console.py [--runs 5] [--seconds 8]
    .venv/bin/python bench/console.py --demo sessions/examples/local-debate.toml

1. First paint: spawns, in a pseudo-terminal, a bare Textual app (Header,
   Static, Footer), ``moot`` (home) and ``moot run SPEC`` (a scripted debate),
   interleaved so each sees the same load, and times from spawn until the text
   (the bare app's line, the home list, the debate's title) reaches the terminal.
   Then idle CPU of the console on the home screen, paused, and ended.
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
from typing import TYPE_CHECKING
from unittest.mock import patch

if TYPE_CHECKING:
    from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


BARE_APP = """
from textual.app import App
from textual.widgets import Footer, Header, Static


class Bare(App):
    def compose(self):
        yield Header()
        yield Static("Paint probe: is the title on screen?")
        yield Footer()


Bare().run()
"""
PROBE_TITLE = "Paint probe: is the title on screen?"


def _probe_spec(
    directory: str, *, delay_ms: float = 40, rounds: int = 3, agree: bool = False
) -> str:
    """A scripted debate titled PROBE_TITLE (no model): what ``moot run`` opens."""
    import tomli_w

    spec = {
        "debate": {
            "title": PROBE_TITLE,
            "motion": "Measure how soon the console shows a debate.",
            "max_rounds": rounds,
            "phases": ["proposal"],
            "consensus_threshold": 2,
        },
        "debaters": [
            {
                "id": f"d{i}",
                "model": "scripted",
                "family": f"f{i}",
                "script": {
                    "votes": ["release" if agree else ["release", "revise"][i % 2]],
                    "token_delay_ms": delay_ms,
                },
            }
            for i in range(2)
        ],
    }
    path = Path(directory) / "probe.toml"
    path.write_text(tomli_w.dumps(spec))
    return str(path)


class Pty:
    """A command in a pseudo-terminal (160x45), its output read as it comes."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
        self.start = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO, close_fds=True
        )
        os.close(slave)
        self.master = master
        self.seen = b""

    def wait_for(self, *needles: bytes, timeout: float = 20) -> float | None:
        """Seconds from spawn until every needle has reached the terminal (None: never)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if all(n in self.seen for n in needles):
                return time.perf_counter() - self.start
            self.drain(0.02)
        return None

    def drain(self, wait: float) -> None:
        ready, _, _ = select.select([self.master], [], [], wait)
        if ready:
            try:
                self.seen += os.read(self.master, 65536)
            except OSError:
                pass

    def cpu_seconds(self) -> float:
        """User + system CPU time of the process so far (Linux /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def idle_cpu(self, seconds: float) -> float:
        """The fraction of a core used over ``seconds`` (output drained meanwhile)."""
        c0, t0 = self.cpu_seconds(), time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            self.drain(0.05)
        return (self.cpu_seconds() - c0) / (time.perf_counter() - t0)

    def send(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        try:
            self.proc.terminate()
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def _env(tmp: str) -> dict[str, str]:
    return dict(
        os.environ,
        TERM="xterm-256color",
        MOOT_CONFIG_DIR=f"{tmp}/config",
        MOOT_SESSIONS_DIR=f"{tmp}/sessions",
        COLUMNS="160",
        LINES="45",
    )


def first_paints(runs: int) -> dict[str, list[float]]:
    """Spawn-to-visible times, the three commands interleaved run by run (same load)."""
    times: dict[str, list[float]] = {"bare": [], "home": [], "run": []}
    with tempfile.TemporaryDirectory() as tmp:
        env = _env(tmp)
        bare = Path(tmp) / "bare.py"
        bare.write_text(BARE_APP)
        spec = _probe_spec(tmp)
        probe = PROBE_TITLE.split(":")[0].encode()
        commands = {
            "bare": ([sys.executable, str(bare)], (probe,)),
            "home": ([sys.executable, "-m", "tui"], (b"Example", b"debates")),
            "run": ([sys.executable, "-m", "tui", "run", spec], (probe,)),
        }
        for _ in range(runs):
            for name, (argv, needles) in commands.items():
                term = Pty(argv, env)
                painted = term.wait_for(*needles)
                term.close()
                if painted is None:
                    print(f"  first paint: {name} never showed its text", file=sys.stderr)
                else:
                    times[name].append(painted)
    return times


def idle_cpu(seconds: float) -> dict[str, float]:
    """CPU of the console at rest: home screen, a paused debate, an ended one.

    A state the console never reached on screen is left out (and said so).
    """
    out: dict[str, float] = {}

    def reached(term: Pty, name: str, *needles: bytes) -> bool:
        if term.wait_for(*needles) is None:
            print(f"  idle CPU: {name} never showed {needles}", file=sys.stderr)
            return False
        return True

    with tempfile.TemporaryDirectory() as tmp:
        env = _env(tmp)
        term = Pty([sys.executable, "-m", "tui"], env)
        if reached(term, "home", b"Example", b"debates"):
            term.idle_cpu(1.0)  # let start-up work (theme validation, session list) finish
            out["home"] = term.idle_cpu(seconds)
        term.close()

        spec = _probe_spec(tmp, delay_ms=5, rounds=50)
        term = Pty([sys.executable, "-m", "tui", "run", spec], env)
        if reached(term, "live", b"LIVE", b"speaking"):
            term.send(b"p")
            if reached(term, "paused", b"PAUSED"):
                term.idle_cpu(3.0)  # the turn in flight finishes
                out["paused"] = term.idle_cpu(seconds)
        term.close()

        spec = _probe_spec(tmp, delay_ms=0, rounds=1, agree=True)  # decided at once
        term = Pty([sys.executable, "-m", "tui", "run", spec], env)
        if reached(term, "ended", b"ENDED"):
            term.idle_cpu(1.0)
            out["ended"] = term.idle_cpu(seconds)
        term.close()
    return out


class PacedProvider:
    """Streams a position at a wall-clock rate, in bursts when the loop was busy.

    That is how a network stream behaves (tokens queue in the socket while the
    console renders), unlike a sleep per token, which slows down whenever the
    event loop is busy and so would hide a console that falls behind.
    """

    def __init__(self, rate: float) -> None:
        self.rate = rate

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        import json
        import re

        from tui.engine.core.ports import TurnReply

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
    from tui.app.messages import TokensArrived
    from tui.app.screens.live import LiveScreen
    from tui.engine.run.events import Event, TokenReceived

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
            screen = app.debate_screen()
            while not isinstance(screen, LiveScreen) or screen.engine is None:
                await asyncio.sleep(0.01)
                screen = app.debate_screen()
            original = screen._relay_engine_event
            stamps: dict[int, float] = {}

            def counting(event: Event) -> None:
                nonlocal emitted
                if isinstance(event, TokenReceived):
                    emitted += 1
                    stamps.setdefault(event.slot.index, time.perf_counter())
                original(event)

            listeners = screen.engine._bus._listeners
            listeners[listeners.index(original)] = counting
            handler = type(screen).on_tokens_arrived

            async def timed(self: LiveScreen, message: TokensArrived) -> None:
                nonlocal shown
                now = time.perf_counter()
                before = {index: len(chunks) for index, chunks in self._tokens.items()}
                await handler(self, message)
                for index, n in before.items():
                    kept = len(self._tokens.get(index, ()))  # held back until its pane is ready
                    shown += max(0, n - kept)
                    if kept < n and index in stamps:
                        lags.append(now - stamps.pop(index))

            timing = patch.object(type(screen), "on_tokens_arrived", timed)
            timing.start()
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
            timing.stop()
            app.simulate_key("q")
            await pilot.pause(0.1)
    latencies.sort()
    lags.sort()

    def q(xs: list[float], p: float) -> float:
        return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")

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


def demo(spec: str) -> dict[str, float | None]:
    """``moot run SPEC`` in a pty: seconds until each phase, a vote, and the decide modal show."""
    marks = {
        "title": b"four-day",
        "critique": b"critique",
        "consensus": b"consensus",
        "decide modal": b"Add a round",
    }
    seen: dict[str, float | None] = {}
    with tempfile.TemporaryDirectory() as tmp:
        term = Pty([sys.executable, "-m", "tui", "run", spec], _env(tmp))
        for name, needle in marks.items():
            seen[name] = term.wait_for(needle, timeout=180)
        term.close()
    return seen


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument(
        "--demo",
        metavar="SPEC",
        help="only time the demo: each phase and the decide modal of `moot run SPEC`",
    )
    args = parser.parse_args()
    if args.demo:
        marks = demo(args.demo)
        print(
            f"demo `moot run {args.demo}` (pty 160x45): "
            + ", ".join(
                f"{k} {'never (180 s)' if v is None else f'{v:.1f} s'}" for k, v in marks.items()
            )
        )
        return 0
    print("moot console benchmarks")
    paints = first_paints(args.runs)
    what = {
        "bare": "bare Textual app (Header, Static, Footer)",
        "home": "`moot` (home screen)",
        "run": "`moot run SPEC` (the debate's title)",
    }
    bare = statistics.median(paints["bare"]) if paints["bare"] else float("nan")
    print(f"  first paint, spawn to text on screen (pty 160x45, {args.runs} runs interleaved):")
    for name, label in what.items():
        xs = paints[name]
        if not xs:
            continue
        med = statistics.median(xs)
        print(
            f"    {label}: median {med * 1000:.0f} ms (best {min(xs) * 1000:.0f}, "
            f"worst {max(xs) * 1000:.0f}), {med / bare:.2f}× the bare app"
            + (" (target ≤ 1.5×)" if name == "run" else "")
        )
    idle = idle_cpu(args.idle_seconds)
    print(
        "  idle CPU (target < 2 % of a core): "
        + ", ".join(f"{k} {v:.1%}" for k, v in idle.items())
        + f" over {args.idle_seconds:.0f} s each"
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
