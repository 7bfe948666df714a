"""``moot bench``: the accuracy of one answer, a vote and a debate on generated items."""

from __future__ import annotations

import argparse

from tui.commands.cli.options import positive


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--task",
        default="arithmetic",
        help="arithmetic (built in) or a reasoning-gym dataset name (the bench extra)",
    )
    parser.add_argument("--items", type=positive, default=20, help="items (default 20)")
    parser.add_argument("--seed", type=int, default=0, help="the items' seed (default 0)")
    parser.add_argument(
        "--model",
        default="local",
        help="a LiteLLM model, local (embedded), or oracle:P[:C] (right with probability P)",
    )
    parser.add_argument(
        "--api-base", help="an OpenAI-compatible server for the model (vLLM, llama.cpp)"
    )
    parser.add_argument(
        "--arms",
        default="single,vote,debate",
        help="some of single,vote,debate,adaptive (default single,vote,debate)",
    )
    parser.add_argument("--agents", type=positive, default=3, help="debate agents (default 3)")
    parser.add_argument("--rounds", type=positive, default=2, help="debate rounds (default 2)")
    parser.add_argument("--samples", type=positive, default=3, help="vote answers (default 3)")
    parser.add_argument(
        "--out", help="a folder keeping per-item lines, sessions and the plot; reruns go on"
    )
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument(
        "--concurrency", "-j", type=positive, default=4, help="item arms at once (default 4)"
    )


def run(args: argparse.Namespace) -> int:
    from tui.bench.run import Options, run_bench
    from tui.engine.basics.errors import MootInputError
    from tui.engine.specs.spec import MAX_DEBATERS

    for flag, value in (("--agents", args.agents), ("--samples", args.samples)):
        if value > MAX_DEBATERS:
            raise MootInputError(flag, [f"{value}: at most {MAX_DEBATERS} agents take part"])
    return run_bench(
        Options(
            task=args.task,
            items=args.items,
            seed=args.seed,
            model=args.model,
            api_base=args.api_base,
            arms=[a.strip() for a in args.arms.split(",") if a.strip()],
            agents=args.agents,
            rounds=args.rounds,
            samples=args.samples,
            out=args.out,
            as_json=args.json,
            concurrency=args.concurrency,
        )
    )
