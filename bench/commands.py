"""Whole commands as a user times them, each beside its anchor in the same run.

Run with ``.venv/bin/python bench/commands.py`` (``--runs 1 --turns 2000`` for a quick look).

Every figure is a whole process timed from spawn to exit (start-up, imports, the
lock, the parse, the checks, the writes), the command and its anchor interleaved
run by run so both see the same load; the median of ``--runs`` is shown with the
load average beside it (on shared cores ratios hold better than seconds):

1. ``moot batch`` of 100 debates (2 debaters, 3 rounds: 600 calls) against an
   OpenAI-compatible server on loopback answering each call after 200 ms, at
   ``--concurrency 100``, vs a bare ``openai.AsyncOpenAI`` making the same calls in
   3 waves of 200 (ideal: 3 × 200 ms). Target ≤ 2×.
2. ``moot resume --headless`` of a 10,000-turn session cut before its result vs
   ``python -c "import tomllib; tomllib.loads(...)"`` on the same file. Target ≤ 3×.
3. ``moot export --format json`` of it, same anchor. Target ≤ 3×.
4. The first paint of ``moot run SPEC`` (scripted) vs a bare Textual app with
   Header, Static and Footer, in a pseudo-terminal (``bench/console.py``). Target ≤ 1.4×.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import tomli_w

sys.path.insert(0, str(Path(__file__).resolve().parent))

import batch  # noqa: E402
import console  # noqa: E402
import long_session  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
TMPFS = "/dev/shm" if Path("/dev/shm").is_dir() else None
COMMIT = "# moot:commit\n"
DEBATES, ROUNDS, SPEAKERS = 100, 3, ("ada", "brook")
# Imported once, untimed, so every timed start reads compiled bytecode as an installed
# moot does (PYTHONDONTWRITEBYTECODE is dropped: without it each start compiles afresh).
WARM = (
    "import tui.cli, tui.commands.batch, tui.commands.headless, tui.render.export, "
    "tui.engine.record.verify, tui.app.app, tui.providers.openai_client, openai, textual.app, "
    "textual.widgets"
)


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def wall(argv: list[str], env: dict[str, str], before: Callable[[], object] | None = None) -> float:
    """Seconds from spawn to exit of one whole command (``before`` runs untimed first)."""
    if before is not None:
        before()
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=REPO, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode not in (0, 3):  # 3: a debate that ended unresolved, as these do
        raise SystemExit(f"{' '.join(argv[:4])} failed ({done.returncode}):\n{done.stderr}")
    return took


def row(what: str, moot: list[float], anchor: list[float], anchor_what: str, target: float) -> str:
    m, a = statistics.median(moot), statistics.median(anchor)
    verdict = "meets" if m / a <= target else "MISSES"
    return (
        f"| {what} | {m:.2f} s | {anchor_what}: {a:.2f} s | {m / a:.2f}× | ≤ {target}× "
        f"{verdict} | {load()} |"
    )


def batch_row(runs: int, env: dict[str, str], tmp: Path) -> str:
    """``moot batch`` of the served debates beside the bare client's waves, one server."""
    port_file = tmp / "port"
    disk = Path(tempfile.mkdtemp(prefix="moot-bench-"))  # on disk: every commit fsynced
    server = subprocess.Popen([sys.executable, batch.__file__, "--serve", str(port_file)])
    try:
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text():
            if time.monotonic() > deadline:
                raise SystemExit("the slow server did not start")
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port_file.read_text()}/v1"
        specs = tmp / "specs"
        specs.mkdir()
        for n in range(DEBATES):
            raw = batch.served_spec(n, base)
            raw["debaters"] = [d for d in raw["debaters"] if d["id"] in SPEAKERS]
            raw["debate"].update(max_rounds=ROUNDS, parallel=True)
            (specs / f"d{n:03}.toml").write_text(tomli_w.dumps(raw))
        env = {**env, "MOOT_BENCH_KEY": "bench-key"}
        moot_runs: list[float] = []
        bare_runs: list[float] = []
        calls = DEBATES * len(SPEAKERS)
        for i in range(runs):
            out = disk / f"sessions-{i}"
            moot_runs.append(
                wall(
                    [sys.executable, "-m", "tui", "--sessions-dir", str(out), "batch"]
                    + ["--concurrency", str(DEBATES), "--no-preflight", str(specs)],
                    env,
                )
            )
            turns = sum(len(long_session_turns(p)) for p in out.glob("*.toml"))
            if turns != calls * ROUNDS:
                raise SystemExit(f"moot batch recorded {turns} turns, not {calls * ROUNDS}")
            bare = [sys.executable, batch.__file__, "--bare", f"{base},{calls},{ROUNDS}"]
            bare_runs.append(wall(bare, env))
    finally:
        server.terminate()
        server.wait(10)
        shutil.rmtree(disk, ignore_errors=True)
    what = (
        f"`moot batch` of {DEBATES} debates × {ROUNDS} rounds ({calls * ROUNDS} calls), "
        f"200 ms loopback server, `--concurrency {DEBATES}`, sessions on disk"
    )
    anchor = f"bare openai client, {ROUNDS} waves of {calls} calls (ideal {ROUNDS * 0.2:.1f} s)"
    return row(what, moot_runs, bare_runs, anchor, 2.0)


def long_session_turns(path: Path) -> list[object]:
    from tui.engine.record.session import load_session

    return list(load_session(path).turns)


def session_rows(runs: int, turns: int, env: dict[str, str], tmp: Path) -> list[str]:
    """``resume --headless`` and ``export --format json`` of a long cut session, beside
    ``tomllib`` parsing it in a process of its own."""
    started = time.perf_counter()
    whole = long_session.write_session(turns, tmp)
    records = whole.read_text(encoding="utf-8").split(COMMIT)
    if "[result]" not in records[-2]:
        raise SystemExit("the long session has no result to cut")
    cut = tmp / "cut.toml"
    cut.write_text(COMMIT.join(records[:-2]) + COMMIT, encoding="utf-8")
    took = time.perf_counter() - started
    print(f"  wrote {turns:,} turns ({cut.stat().st_size:,} bytes) in {took:.0f} s; {load()}")
    work = tmp / "resumed.toml"
    anchor_code = f"import tomllib; tomllib.loads(open({str(cut)!r}, encoding='utf-8').read())"
    anchor = [sys.executable, "-c", anchor_code]
    times: dict[str, list[float]] = {"resume": [], "export": [], "anchor": []}
    for _ in range(runs):
        times["anchor"].append(wall(anchor, env))
        times["resume"].append(
            wall(
                [sys.executable, "-m", "tui", "resume", "--headless", str(work)],
                env,
                before=lambda: work.write_bytes(cut.read_bytes()),
            )
        )
        times["export"].append(
            wall([sys.executable, "-m", "tui", "export", "--format", "json", str(cut)], env)
        )
    if "[result]" not in work.read_text(encoding="utf-8"):
        raise SystemExit("the resume did not reach its result")
    tom = f'`python -c "import tomllib; tomllib.loads(…)"` on the same file ({turns:,} turns)'
    return [
        row(
            f"`moot resume --headless` of a {turns:,}-turn session cut before its result",
            times["resume"],
            times["anchor"],
            tom,
            3.0,
        ),
        row("`moot export --format json` of it", times["export"], times["anchor"], tom, 3.0),
    ]


def paint_row(runs: int, env: dict[str, str], tmp: Path) -> str:
    """Spawn to the title on screen: ``moot run SPEC`` (scripted) vs the bare Textual app."""
    bare = tmp / "bare.py"
    bare.write_text(console.BARE_APP)
    spec = console._probe_spec(str(tmp))
    probe = console.PROBE_TITLE.split(":")[0].encode()
    env = {**env, "TERM": "xterm-256color", "COLUMNS": "160", "LINES": "45"}
    commands = {
        "bare": [sys.executable, str(bare)],
        "run": [sys.executable, "-m", "tui", "run", spec],
    }
    times: dict[str, list[float]] = {"bare": [], "run": []}
    for _ in range(runs):
        for name, argv in commands.items():
            term = console.Pty(argv, env)
            painted = term.wait_for(probe, timeout=120)
            term.close()
            if painted is None:
                raise SystemExit(f"first paint: {name} never showed its text")
            times[name].append(painted)
    return row(
        "first paint of a live debate (`moot run SPEC`, scripted)",
        times["run"],
        times["bare"],
        "a bare Textual app with Header, Static and Footer",
        1.4,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--only", choices=("batch", "session", "paint"), action="append")
    args = parser.parse_args()
    only = set(args.only or ("batch", "session", "paint"))
    print(f"whole commands, median of {args.runs} interleaved runs; {load()} at the start")
    with tempfile.TemporaryDirectory(dir=TMPFS) as name:
        tmp = Path(name)
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "MOOT_CONFIG_DIR": str(tmp / "config"),
            "MOOT_SESSIONS_DIR": str(tmp / "sessions"),
        }
        subprocess.run([sys.executable, "-c", WARM], env=env, cwd=REPO, check=True)
        os.environ["MOOT_CONFIG_DIR"] = env["MOOT_CONFIG_DIR"]  # the long session's signer
        rows = []
        if "batch" in only:
            rows.append(batch_row(args.runs, env, tmp))
            print(rows[-1])
        if "session" in only:
            rows += session_rows(args.runs, args.turns, env, tmp)
            print("\n".join(rows[-2:]))
        if "paint" in only:
            rows.append(paint_row(args.runs, env, tmp))
            print(rows[-1])
    print("\n| what the user runs | moot | anchor, same run | ratio | target | load |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
