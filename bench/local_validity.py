"""How often the embedded 135M model's answers pass the engine's checks, per shipped example.

Run: .venv/bin/python bench/local_validity.py [--runs 5] [--examples local-debate.toml,...]
     .venv/bin/python bench/local_validity.py --templates [challenge,...]   (``moot new``'s specs)

The tests on the local model check that every answer is judged (counted, or
refused on record with its reason), never that it is valid: llama.cpp samples
each request with a fresh seed, so validity is a rate, not a fact. This plays
each ``sessions/examples/local-*.toml`` ``--runs`` times in this process, on the
embedded model, and prints that rate: model turns played, valid, refused (a turn
is refused after the engine asked again), the commonest refusal reasons, and how
the runs ended. A run ends as its protocol intends when its rule is the
protocol's own (a vote, a gate, judges, the operator's hands), not a refused
turn, a provider failure or a budget, and it does so within three minutes; each
example should in at least 4 of 5 runs. It is the figure to watch when a prompt,
a schema or an example changes.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui.engine import Engine  # noqa: E402
from tui.engine.specs.spec import read_spec_file  # noqa: E402
from tui.providers.registry import close_all, provider_for  # noqa: E402
from tui.templates import TEMPLATES  # noqa: E402
from tui.tools.toolbox import run_tools  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "sessions" / "examples"
DEFAULT = sorted(p.name for p in EXAMPLES.glob("local-*.toml"))
FAILED = {"invalid_turn", "provider_failure", "budget_exhausted"}  # not a protocol's ending
IN_TIME = 180.0  # seconds: the demo's promise on two cores


def _reason(error: str) -> str:
    """A refusal reason without the item it names: ``weaknesses[1]: repeats …`` counts as one."""
    return re.sub(r"\[\d+\]", "[n]", error.split(" / ")[0])[:90]


async def _play(example: str, runs: int, folder: Path = EXAMPLES) -> None:
    played = valid = 0
    reasons: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    intended = 0
    slowest = 0.0
    t0 = time.perf_counter()
    for _ in range(runs):
        spec, _raw = read_spec_file(folder / example)
        tools = run_tools(spec, folder / example)  # the spec's [[tools]], as `moot run` starts them
        if tools is not None:
            await tools.start()
        engine = Engine(spec, provider_for, tools=tools)
        started = time.perf_counter()
        try:
            decision = await engine.run()
        finally:
            if tools is not None:
                await tools.aclose()
        took_run = time.perf_counter() - started
        slowest = max(slowest, took_run)
        rules[decision.rule] += 1
        intended += decision.rule not in FAILED and took_run <= IN_TIME
        for turn in engine.state.turns:
            if turn.model == "scripted":
                continue
            played += 1
            if turn.invalid:
                reasons[_reason(turn.error or "")] += 1
            else:
                valid += 1
    rate = valid / played if played else 0.0
    took = time.perf_counter() - t0
    print(f"{example}: {valid}/{played} model turns valid ({rate:.0%}), {runs} runs, {took:.0f} s")
    print("  ended: " + ", ".join(f"{rule} ×{n}" for rule, n in rules.most_common()))
    print(f"  as the protocol intends, within {IN_TIME:.0f} s: {intended} of {runs}")
    print(f"  slowest run: {slowest:.0f} s")
    for reason, n in reasons.most_common(3):
        print(f"  refused ×{n}: {reason}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--examples", default=",".join(DEFAULT))
    parser.add_argument(
        "--templates",
        nargs="?",
        const=",".join(TEMPLATES),
        help="play the specs `moot new` writes instead (all, or a comma list: challenge,refine)",
    )
    args = parser.parse_args()
    try:
        if args.templates:
            with tempfile.TemporaryDirectory() as folder:
                for name in args.templates.split(","):
                    template = TEMPLATES[name.strip()]
                    path = Path(folder) / f"new-{name}.toml"
                    path.write_text(template.format(name=path.name), encoding="utf-8")
                    await _play(path.name, args.runs, Path(folder))
            return
        for example in args.examples.split(","):
            await _play(example.strip(), args.runs)
    finally:
        await close_all()


if __name__ == "__main__":
    asyncio.run(main())
