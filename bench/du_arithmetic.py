"""Du et al.'s arithmetic, debate against a vote, on a model you serve: the run a GPU owner makes.

Du et al. (2023, "Improving Factuality and Reasoning in Language Models through
Multiagent Debate") asked gpt-3.5-turbo-0301 for ``a+b*c+d-e*f`` over integers 0..29,
100 items, three agents for two rounds, and found debate ahead of a majority of
three. ``moot bench``'s built-in ``arithmetic`` task is those items. This runs it,
once per seed, on an OpenAI-compatible server (vLLM, llama.cpp's llama-server) with
all four arms (single, a vote of 3, a 3 × 2 debate, the adaptive debate), each seed
in its own resumable ``--out`` folder, and prints accuracy per arm and seed, the mean
over seeds, and the published figures beside them. The exact ``moot bench`` command
of each seed is printed first, so any seed can be rerun (or resumed) by hand.

Run (Qwen2.5-7B-Instruct on vLLM; llama-server works the same with its own port):

    vllm serve Qwen/Qwen2.5-7B-Instruct --served-model-name qwen2.5-7b-instruct --port 8000
    .venv/bin/python bench/du_arithmetic.py --api-base http://127.0.0.1:8000/v1

The server's own sampling defaults apply (Qwen2.5's generation config: temperature
0.7), so the vote's three answers differ; 100 items × 3 seeds is 7,200 to 9,900 calls.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shlex
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tui.cli import main as moot  # noqa: E402
from tui.exitcodes import ExitCode  # noqa: E402

ARMS = ("single", "vote", "debate", "adaptive")
# Du et al. 2023, Table 1, arithmetic (gpt-3.5-turbo-0301, 100 items): the shape to compare
# with, not the level a 7B model reaches. They have no adaptive arm.
PUBLISHED = {"single": 0.670, "vote": 0.750, "debate": 0.818}


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--api-base", required=True, help="the server, e.g. http://127.0.0.1:8000/v1")
    ap.add_argument(
        "--model",
        default="openai/qwen2.5-7b-instruct",
        help="openai/ and the name the server serves (default openai/qwen2.5-7b-instruct)",
    )
    ap.add_argument("--items", type=int, default=100, help="items per seed (default 100)")
    ap.add_argument("--seeds", default="0,1,2", help="the items' seeds (default 0,1,2)")
    ap.add_argument("--out", default="runs/du-arithmetic", help="a folder per seed goes here")
    ap.add_argument("--concurrency", type=int, default=8, help="item arms at once (default 8)")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args(argv)
    try:
        args.seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        ap.error(f"--seeds: expected whole numbers separated by commas, got {args.seeds!r}")
    if not args.seeds or args.items < 1 or args.concurrency < 1:
        ap.error("--seeds needs one seed or more; --items and --concurrency at least 1")
    return args


def command(args: argparse.Namespace, seed: int) -> list[str]:
    """The ``moot bench`` arguments of one seed."""
    return [
        *("bench", "--task", "arithmetic", "--items", str(args.items), "--seed", str(seed)),
        *("--model", args.model, "--api-base", args.api_base, "--arms", ",".join(ARMS)),
        *("--agents", "3", "--rounds", "2", "--samples", "3"),
        *("--out", str(Path(args.out) / f"seed-{seed}"), "--concurrency", str(args.concurrency)),
        "--json",
    ]


def run(args: argparse.Namespace) -> tuple[int, dict[str, Any]]:
    """Each seed's bench in turn: the exit code and ``{"seeds": {seed: report}, "mean": …}``."""
    reports: dict[str, Any] = {}
    for seed in args.seeds:
        argv = command(args, seed)
        print("moot " + shlex.join(argv), file=sys.stderr)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = moot(argv)
        if code != ExitCode.DECIDED:
            return code, {}
        reports[str(seed)] = json.loads(printed.getvalue())
    mean = {
        arm: statistics.fmean(r["arms"][arm]["accuracy"] for r in reports.values()) for arm in ARMS
    }
    return ExitCode.DECIDED, {"seeds": reports, "mean": mean, "published": PUBLISHED}


def table(figures: dict[str, Any]) -> str:
    seeds = list(figures["seeds"])
    head = ["arm", *(f"seed {s}" for s in seeds), "mean", "calls/item", "gap", "conform", "Du"]
    rows = [head]
    for arm in ARMS:
        last = figures["seeds"][seeds[-1]]["arms"][arm]
        conformity = last.get("conformity")
        rows.append(
            [
                arm,
                *(f"{figures['seeds'][s]['arms'][arm]['accuracy']:.1%}" for s in seeds),
                f"{figures['mean'][arm]:.1%}",
                f"{last['calls_per_item']:.2f}",
                f"{last['oracle_gap']:.1%}",
                "–" if conformity is None else f"{conformity:.1%}",
                f"{PUBLISHED[arm]:.1%}" if arm in PUBLISHED else "–",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    note = "calls/item, gap and conform: the last seed's; Du: Du et al. 2023, Table 1 (gpt-3.5)"
    return "\n".join([*lines, note])


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    code, figures = run(args)
    if code != ExitCode.DECIDED:
        return code
    print(json.dumps(figures) if args.json else table(figures))
    return ExitCode.DECIDED


if __name__ == "__main__":
    sys.exit(main())
