"""Engine benchmarks against the targets in docs/performance.md.

Run with ``.venv/bin/python bench/engine.py`` (add ``--quick`` for fewer repeats).

1. Engine overhead per turn: an instant in-memory provider (pre-serialised JSON,
   no sleep), no session file, no event listeners; 300 and 3,000 turns.
2. Autosave per turn with fsync: ``SessionStore.append_turn`` at 10 and 1,000 turns.
3. The 300-turn debate size on AutoGen's RoundRobinGroupChat with its
   ReplayChatCompletionClient (optional ``bench`` extra), side by side with moot.
4. One phase of 5 independent 200 ms calls: wall time.

Timings are best of several repeats, so a noisy neighbour inflates nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tui.engine.core.ports import TurnReply, TurnRequest
from tui.engine.core.records import Turn
from tui.engine.record.session import SessionStore
from tui.engine.run.runner import Engine
from tui.engine.specs.spec import validate_spec

DEBATERS = ("ada", "brook", "cyrus")
MODELS = ("openai/gpt-4o", "anthropic/claude-3-5-sonnet", "gemini/gemini-1.5-pro")
PHASES = ("proposal", "critique", "revision", "consensus")
VOTES = ("release", "revise", "escalate")
TURNS_PER_ROUND = len(DEBATERS) * len(PHASES)  # debate protocol: phases x debaters

TARGET_OVERHEAD_US = 100.0
TARGET_FLAT = 1.2
TARGET_AUTOSAVE_FLAT = 1.5
TARGET_VS_AUTOGEN = 0.15
TARGET_PARALLEL = 1.2


# --------------------------------------------------------------------- specs
def debate_spec(turns: int) -> dict[str, Any]:
    """A 3-debater debate whose votes always split, so it runs to max_rounds."""
    if turns % TURNS_PER_ROUND:
        raise ValueError(f"{turns} is not a multiple of {TURNS_PER_ROUND} turns per round")
    return {
        "debate": {
            "title": "Engine benchmark",
            "motion": "Adopt a four-day working week for the platform team.",
            "protocol": "debate",
            "phases": list(PHASES),
            "votes": list(VOTES),
            "max_rounds": turns // TURNS_PER_ROUND,
            "consensus_threshold": 2,  # never met: each debater keeps its own vote
        },
        "debaters": [
            {"id": d, "model": m, "role": f"Debater {d}."}
            for d, m in zip(DEBATERS, MODELS, strict=True)
        ],
    }


def parallel_spec(calls: int) -> dict[str, Any]:
    """One round of a single proposal phase: ``calls`` independent calls."""
    return {
        "debate": {
            "title": "Parallel phase benchmark",
            "motion": "Adopt a four-day working week for the platform team.",
            "phases": ["proposal"],
            "max_rounds": 1,
            "parallel": True,
        },
        "debaters": [{"id": f"d{i}", "model": "openai/gpt-4o"} for i in range(calls)],
    }


# ----------------------------------------------------------------- providers
def canned_text(speaker: str, kind: str) -> str:
    vote = VOTES[DEBATERS.index(speaker) % len(VOTES)] if speaker in DEBATERS else VOTES[0]
    if kind == "position":
        content: dict[str, Any] = {
            "stance": f"{speaker} favours a staged trial with a clear exit criterion.",
            "rationale": "A trial bounds the risk while measuring throughput and on-call load.",
            "vote": vote,
        }
    else:
        content = {
            "weaknesses": ["The position names no metric that would end the trial early."],
            "suggestions": ["Define an on-call incident threshold that stops the trial."],
            "verdict": "defects_found",
            "vote": vote,
        }
    return json.dumps(content)


class InstantProvider:
    """Answers at once with pre-serialised JSON for the slot's kind; votes split by speaker."""

    def __init__(self) -> None:
        self._texts = {
            (d, k): canned_text(d, k) for d in DEBATERS for k in ("position", "critique")
        }

    async def complete(self, request: TurnRequest, on_token: Any) -> TurnReply:
        return TurnReply(text=self._texts[(request.slot.speaker, request.slot.kind)])

    async def aclose(self) -> None:
        return None


class SleepyProvider:
    """Every call takes ``delay`` seconds of asynchronous waiting."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._text = canned_text("ada", "position")

    async def complete(self, request: TurnRequest, on_token: Any) -> TurnReply:
        await asyncio.sleep(self.delay)
        return TurnReply(text=self._text)

    async def aclose(self) -> None:
        return None


# ------------------------------------------------------------------ measures
async def engine_run_seconds(
    spec_raw: dict[str, Any], provider: Any, listen: bool = False
) -> tuple[float, Engine]:
    spec = validate_spec(spec_raw)
    engine = Engine(spec, lambda _d: provider)  # no sink
    if listen:  # what every real run pays: events built and delivered to a subscriber
        seen: list[object] = []
        engine.subscribe(seen.append)
    t0 = time.perf_counter()
    await engine.run()
    return time.perf_counter() - t0, engine


def best_engine_per_turn_us(
    turns: int, repeats: int, listen: bool = False
) -> tuple[float, float, Engine]:
    """(best, median) microseconds per turn over ``repeats`` fresh engines."""
    raw = debate_spec(turns)
    provider = InstantProvider()
    samples: list[float] = []
    engine: Engine | None = None
    for _ in range(repeats):
        gc.collect()
        secs, engine = asyncio.run(engine_run_seconds(raw, provider, listen))
        n = len(engine.state.turns)
        if n != turns or engine.decision is None or engine.decision.rule != "max_rounds_exhausted":
            rule = engine.decision.rule if engine.decision else None
            raise SystemExit(f"benchmark debate ran {n} turns ending by {rule}; expected {turns}")
        samples.append(secs / n * 1e6)
    assert engine is not None
    return min(samples), statistics.median(samples), engine


def autosave_per_turn_us(
    spec_raw: dict[str, Any], turns: Sequence[Turn], directory: Path, tag: str
) -> list[float]:
    """Microseconds of each ``append_turn`` (fsynced) into a fresh session file."""
    store = SessionStore.create(directory / f"bench-{tag}.toml", spec_raw)
    times: list[float] = []
    try:
        for turn in turns:
            t0 = time.perf_counter()
            store.append_turn(turn)
            times.append((time.perf_counter() - t0) * 1e6)
    finally:
        store.close()
    return times


def autogen_per_turn_us(turns: int, repeats: int) -> tuple[float, float, int] | str:
    """(best, median) µs per message of a RoundRobinGroupChat of 3 replay agents, or why not."""
    try:
        from autogen_agentchat.agents import AssistantAgent
        from autogen_agentchat.base import ChatAgent, Team
        from autogen_agentchat.conditions import MaxMessageTermination
        from autogen_agentchat.teams import RoundRobinGroupChat
        from autogen_ext.models.replay import ReplayChatCompletionClient
    except ImportError as err:
        return (
            f"AutoGen is not importable ({err}); install the bench extra: "
            ".venv-uv/bin/uv sync --locked --extra dev --extra bench --group local-model"
        )
    import logging

    logging.getLogger("autogen_core").setLevel(logging.ERROR)
    logging.getLogger("autogen_agentchat").setLevel(logging.ERROR)
    per_agent = -(-turns // len(DEBATERS))
    kinds = [PHASES[(i // len(DEBATERS)) % len(PHASES)] for i in range(turns)]

    async def one_run() -> tuple[float, int]:
        agents: list[ChatAgent | Team] = []
        for j, d in enumerate(DEBATERS):
            # The same canned JSON moot parses, in this agent's speaking order.
            replies = [
                canned_text(d, "critique" if kinds[i] == "critique" else "position")
                for i in range(j, turns, len(DEBATERS))
            ]
            replies += [canned_text(d, "position")] * (per_agent - len(replies))
            client = ReplayChatCompletionClient(replies)
            agents.append(
                AssistantAgent(d, model_client=client, system_message=f"You are {d}, a debater.")
            )
        # The task message counts towards MaxMessageTermination: +1 for it.
        team = RoundRobinGroupChat(agents, termination_condition=MaxMessageTermination(turns + 1))
        t0 = time.perf_counter()
        result = await team.run(task="Motion: adopt a four-day working week for the platform team.")
        secs = time.perf_counter() - t0
        spoken = sum(1 for m in result.messages if getattr(m, "source", "") in DEBATERS)
        return secs, spoken

    samples: list[float] = []
    spoken = 0
    for _ in range(repeats):
        gc.collect()
        secs, spoken = asyncio.run(one_run())
        if spoken != turns:
            return f"AutoGen run produced {spoken} agent messages, expected {turns}"
        samples.append(secs / spoken * 1e6)
    return min(samples), statistics.median(samples), spoken


def parallel_phase_wall_ms(calls: int, delay: float, repeats: int) -> tuple[float, float]:
    raw = parallel_spec(calls)
    provider = SleepyProvider(delay)
    samples = []
    for _ in range(repeats):
        secs, engine = asyncio.run(engine_run_seconds(raw, provider))
        if len(engine.state.turns) != calls:
            raise SystemExit(f"parallel phase ran {len(engine.state.turns)} turns, not {calls}")
        samples.append(secs * 1000)
    return min(samples), max(samples)


# -------------------------------------------------------------------- report
def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def row(label: str, value: str, target: str = "", ok: bool | None = None) -> None:
    mark = "" if ok is None else verdict(ok)
    print(f"  {label:<44}{value:>16}   {target:<22}{mark}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="directory for the autosave files (default: a temp dir)",
    )
    args = ap.parse_args(argv)
    rep_small, rep_large = (3, 2) if args.quick else (7, 5)

    print(f"moot engine benchmark   python {sys.version.split()[0]}   {os.cpu_count()} CPUs")
    print(
        f"  (debate: {len(DEBATERS)} debaters x {len(PHASES)} phases"
        f" = {TURNS_PER_ROUND} turns/round, votes split so consensus is never reached)"
    )

    # 1. Engine overhead ---------------------------------------------------
    print(
        "\n1. Engine overhead per turn (instant in-memory provider, no persistence, no listeners)"
    )
    best_engine_per_turn_us(120, 2)  # warm imports, pydantic caches
    o300, m300, _ = best_engine_per_turn_us(300, rep_small)
    o3000, m3000, big = best_engine_per_turn_us(3000, rep_large)
    flat = o3000 / o300
    row(
        f"300 turns   (best of {rep_small}; median {m300:.1f})",
        f"{o300:8.1f} µs/turn",
        f"≤ {TARGET_OVERHEAD_US:.0f} µs",
        o300 <= TARGET_OVERHEAD_US,
    )
    row(
        f"3,000 turns (best of {rep_large}; median {m3000:.1f})",
        f"{o3000:8.1f} µs/turn",
        f"≤ {TARGET_OVERHEAD_US:.0f} µs",
        o3000 <= TARGET_OVERHEAD_US,
    )
    row("ratio 3,000 / 300", f"{flat:8.2f} x", f"≤ {TARGET_FLAT}x", flat <= TARGET_FLAT)
    l300, lm300, _ = best_engine_per_turn_us(300, rep_small, listen=True)
    row(
        f"300 turns with one event subscriber (median {lm300:.1f})",
        f"{l300:8.1f} µs/turn",
        "(for reference)",
    )

    # 2. Autosave ------------------------------------------------------------
    print("\n2. Autosave per turn (SessionStore.append_turn, fsync on)")
    raw = debate_spec(3000)
    turns = big.state.turns[:1000]
    with tempfile.TemporaryDirectory(prefix="moot-bench-", dir=args.dir) as tmp:
        small_runs = [autosave_per_turn_us(raw, turns[:10], Path(tmp), f"10-{i}") for i in range(5)]
        large = autosave_per_turn_us(raw, turns, Path(tmp), "1000")
        size = (Path(tmp) / "bench-1000.toml").stat().st_size
        where = tmp
    small_mean = min(statistics.fmean(r) for r in small_runs)
    small_med = min(statistics.median(r) for r in small_runs)
    large_mean, large_med = statistics.fmean(large), statistics.median(large)
    tail_mean = statistics.fmean(large[-100:])
    print(f"  (files in {where}; the 1,000-turn file ended at {size / 1024:.0f} KiB)")
    row("10 turns    (mean; best of 5 files)", f"{small_mean:8.1f} µs/turn")
    row("1,000 turns (mean)", f"{large_mean:8.1f} µs/turn")
    row("1,000 turns, last 100 appends (mean)", f"{tail_mean:8.1f} µs/turn")
    row("median: 10 turns / 1,000 turns", f"{small_med:6.0f} / {large_med:.0f} µs")
    ratio = large_mean / small_mean
    row(
        "ratio 1,000 / 10 (means)",
        f"{ratio:8.2f} x",
        f"≤ {TARGET_AUTOSAVE_FLAT}x",
        ratio <= TARGET_AUTOSAVE_FLAT,
    )

    # 3. AutoGen -------------------------------------------------------------
    print(
        "\n3. Same debate size (300 turns) on AutoGen RoundRobinGroupChat"
        " + ReplayChatCompletionClient"
    )
    ag = autogen_per_turn_us(300, rep_small)
    if isinstance(ag, str):
        print(f"  AutoGen: {ag}")
        row("moot, 300 turns", f"{o300:8.1f} µs/turn")
    else:
        import importlib.metadata as md

        ag_best, ag_med, _ = ag
        print(
            f"  (autogen-agentchat {md.version('autogen-agentchat')}, "
            f"autogen-ext {md.version('autogen-ext')}; 3 AssistantAgents, "
            "MaxMessageTermination(301) incl. the task message)"
        )
        row(f"moot    (best of {rep_small}; median {m300:.1f})", f"{o300:8.1f} µs/turn")
        row(f"AutoGen (best of {rep_small}; median {ag_med:.1f})", f"{ag_best:8.1f} µs/turn")
        vs = o300 / ag_best
        row(
            "ratio moot / AutoGen",
            f"{vs:8.3f} x",
            f"≤ {TARGET_VS_AUTOGEN}x",
            vs <= TARGET_VS_AUTOGEN,
        )

    # 4. Parallel phase ------------------------------------------------------
    print("\n4. One phase of 5 independent calls of 200 ms each (asyncio.sleep provider)")
    best, worst = parallel_phase_wall_ms(5, 0.2, 3)
    row(
        "wall time (best of 3)",
        f"{best:8.1f} ms",
        f"≤ {TARGET_PARALLEL * 200:.0f} ms",
        best <= TARGET_PARALLEL * 200,
    )
    row("wall time (worst of 3)", f"{worst:8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
