"""The whole gate on a busy machine: ``./dev.sh test`` with N busy processes beside it.

Run: python3 bench/suite_under_load.py [--runs 3] [--busy N] [-- PYTEST ARGS]

A developer's machine is rarely quiet, and the gate must pass there too. Each run
starts N processes that spin on a core (N = the cores this process may use, unless
``--busy`` says), runs ``./dev.sh test`` (set-up, the tests on every core, lint,
format, types and the import contracts beside them), stops the spinners, and
prints the wall time, the exit code, the counts from pytest's last line and each
failing test's id. Before each run, with nothing spinning yet, it times a fixed
pure-Python loop: this machine's speed varies from hour to hour (one commit's suite
took 8 minutes one hour and 10 the next), so each figure says how fast the machine
was. ``--busy 0`` makes it a quiet run. Runs follow each other, as the issue asks
("3 runs in a row").
Each run's whole output is kept in a log whose path is printed. Beside its wall time
goes the CPU time its processes used (user and system: ``./dev.sh`` and every process
under it that was waited for): on a machine whose speed moves, the CPU time is the
work, the wall time how fast it went. The goal beside each figure is the issue's:
6 minutes quiet, 14 with the busy processes, no failure either way.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUIET_GOAL_S = 6 * 60.0
BUSY_GOAL_S = 14 * 60.0
SPIN = "while True: pass"
PROBE = """
import time
started = time.process_time()
n = 0
for i in range(10_000_000):
    n += i * i % 7
print(time.process_time() - started)
"""
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped)")
_SUMMARY = re.compile(r"^=* ?\d+ (passed|failed|errors?|skipped)\b.* in [\d.]+s", re.MULTILINE)
_FAILED = re.compile(r"^(FAILED|ERROR) (\S+)", re.MULTILINE)


def cores() -> int:
    """The cores this process may run on (what ``-n auto`` sees on Linux)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@dataclass
class Run:
    wall_s: float
    exit_code: int
    counts: dict[str, int]  # from pytest's last line: passed, failed, errors, skipped
    failures: list[tuple[str, str]]  # (FAILED or ERROR, test id)
    cpu_s: float  # CPU seconds (user and system) of ./dev.sh and what it started
    load: float  # the 1-minute load average as the run ended
    probe_s: float  # CPU seconds the fixed loop took just before the run


def machine_probe() -> float:
    """CPU seconds a fixed loop takes in a fresh Python (lower is a faster machine)."""
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    return float(done.stdout)


def _children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def one_run(busy: int, pytest_args: list[str], log: Path) -> Run:
    """``./dev.sh test`` once beside ``busy`` spinners; its figures."""
    probe = machine_probe()
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(busy)]
    try:
        cpu_before = _children_cpu_s()  # holds the probe's; the spinners' only once reaped
        started = time.monotonic()
        with log.open("w") as out:
            done = subprocess.run(
                ["./dev.sh", "test", *pytest_args],
                cwd=REPO,
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            )
        wall = time.monotonic() - started
        cpu = _children_cpu_s() - cpu_before
        load = os.getloadavg()[0]
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    text = log.read_text(errors="replace")
    summary = [m.group(0) for m in _SUMMARY.finditer(text)]
    counts = {kind: int(n) for n, kind in _COUNT.findall(summary[-1])} if summary else {}
    return Run(wall, done.returncode, counts, _FAILED.findall(text), cpu, load, probe)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs in a row (the issue asks 3)")
    parser.add_argument("--busy", type=int, default=cores(), help="spinning processes beside it")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed on to pytest")
    args = parser.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="moot-suite-under-load-"))
    goal_s = BUSY_GOAL_S if args.busy else QUIET_GOAL_S
    print(f"{args.runs} run(s) of ./dev.sh test with {args.busy} busy processes, {cores()} cores")
    failed_runs = 0
    for n in range(1, args.runs + 1):
        log = logs / f"run-{n}.log"
        r = one_run(args.busy, args.pytest_args, log)
        counts = ", ".join(f"{v} {k}" for k, v in r.counts.items()) or "no pytest summary"
        print(
            f"run {n}: {r.wall_s / 60:.1f} min (goal {goal_s / 60:.0f}), {r.cpu_s:.0f} s of CPU, "
            f"exit {r.exit_code}, {counts}, load {r.load:.1f}, speed probe {r.probe_s:.2f} s; "
            f"log {log}"
        )
        for kind, test in r.failures:
            print(f"  {kind} {test}")
        failed_runs += r.exit_code != 0
    print(f"{failed_runs} of {args.runs} run(s) failed")
    return 1 if failed_runs else 0


if __name__ == "__main__":
    sys.exit(main())
