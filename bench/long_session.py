"""A 10,000-turn session read back: resume, verify, replay-open and export beside ``tomllib``.

Run with ``.venv/bin/python bench/long_session.py`` (``--turns 1200`` for a quick look).

A scripted 3-debater debate (the debate protocol, votes that never agree) runs
into a session file on tmpfs, signed per record like every session. Each read
of the file is then timed in CPU seconds (wall time on shared cores measures the
neighbours), best of ``--repeats`` taken in turn, against the anchor: the time
``tomllib`` takes to parse the same bytes, which every read pays at least.

- **resume**: ``SessionStore.open_existing`` (lock, parse, chain and signature
  check, the store rebuilt), closed at once;
- **verify**: ``verify_file``, every claim the file makes;
- **replay-open**: ``load_session`` and the replay screen's first state (the
  session's protocol at its start), what the console does before its first paint;
- **export**: ``load_session`` then ``to_json``.

Peak RSS over the reads is shown at two file sizes, so memory flat in turns
shows as the same bytes per turn. Target: each read within 3x ``tomllib``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import InstantProvider, debate_spec  # noqa: E402

TARGET = 3.0
ANCHOR = "tomllib (anchor)"
TMPFS = "/dev/shm" if Path("/dev/shm").is_dir() else None


PHASES = ("proposal", "critique", "revision", "critique", "consensus")
DEBATERS = 2  # a spec holds at most 2,000 places to speak: 1,000 rounds of 2 at 5 phases


def long_spec(turns: int) -> dict[str, Any]:
    """Two debaters whose votes never agree, over as many rounds as ``turns`` needs."""
    per_round = DEBATERS * len(PHASES)
    raw = debate_spec(12)  # one round of the engine bench's debate, cut to two debaters
    raw["debaters"] = raw["debaters"][:DEBATERS]
    raw["debate"].update(phases=list(PHASES), max_rounds=-(-turns // per_round))
    return raw


def write_session(turns: int, folder: Path) -> Path:
    """A finished session of ``turns`` turns (rounded up to whole rounds)."""
    from tui.engine.record.live import LiveSession
    from tui.engine.specs.spec import validate_spec

    raw = long_spec(turns)
    provider = InstantProvider()
    path = folder / f"long-{turns}.toml"
    live = LiveSession.start(validate_spec(raw), raw, lambda _d: provider, out=path)
    try:
        asyncio.run(live.engine.run())
    finally:
        live.close()
    return path


def cpu_seconds(fn: Callable[[], Any]) -> float:
    """CPU time of one call: on two shared cores, others' load stretches wall time, not this."""
    gc.collect()
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def interleaved(reads: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Best CPU seconds of each read, the reads taken in turn each repeat so all see alike."""
    out = dict.fromkeys(reads, float("inf"))
    for _ in range(repeats):
        for name, fn in reads.items():
            out[name] = min(out[name], cpu_seconds(fn))
    return out


def resume(path: Path) -> None:
    from tui.engine.record.session import SessionStore

    store, _ = SessionStore.open_existing(path)
    store.close()


def verify(path: Path) -> None:
    from tui.engine.record.verify import verify_file

    report = verify_file(path)
    if not report.ok:
        raise SystemExit(f"{path} does not verify: {[c for c in report.claims if not c.ok][:3]}")


def replay_open(path: Path) -> None:
    from tui.engine.record.replay import protocol_at
    from tui.engine.record.session import load_session

    data = load_session(path)
    protocol_at(data.spec, data.turns[:0])


def export(path: Path) -> None:
    from tui.engine.record.session import load_session
    from tui.render.export import to_json

    to_json(load_session(path))


READS: dict[str, Callable[[Path], None]] = {
    "resume": resume,
    "verify": verify,
    "replay-open": replay_open,
    "export (JSON)": export,
}


def peak_rss(path: Path, read: str) -> int:
    """Peak RSS (kB) of a fresh process doing one read, less its RSS after the imports.

    From ``/proc`` (VmHWM starts afresh at exec; ``ru_maxrss`` keeps the parent's peak).
    """
    code = (
        "import sys; "
        f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); import long_session as b; "
        "from tui.engine.record import verify, session; import tui.render.export; "
        "base = b.status_kb('VmRSS'); "
        f"b.READS[{read!r}](__import__('pathlib').Path({str(path)!r})); "
        "print(b.status_kb('VmHWM') - base)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; sessions on {TMPFS or 'disk'}")
    with tempfile.TemporaryDirectory(dir=TMPFS) as tmp:
        os.environ.setdefault("MOOT_CONFIG_DIR", str(Path(tmp) / "config"))
        t0 = time.perf_counter()
        small = write_session(args.turns // 10, Path(tmp))
        path = write_session(args.turns, Path(tmp))
        size = path.stat().st_size
        print(f"wrote {args.turns:,} turns, {size:,} bytes in {time.perf_counter() - t0:.1f} s")
        data = path.read_bytes()
        reads: dict[str, Callable[[], object]] = {ANCHOR: lambda: tomllib.loads(data.decode())}
        reads |= {name: partial(read, path) for name, read in READS.items()}
        cpu = interleaved(reads, args.repeats)
        print(f"{'read':<16} {'CPU s':>8} {'x tomllib':>10} {'target':>8}")
        for name, secs in cpu.items():
            ratio = secs / cpu[ANCHOR]
            verdict = "" if name == ANCHOR else "meets" if ratio <= TARGET else "MISSES"
            print(f"{name:<16} {secs:>8.3f} {ratio:>10.2f} {f'<= {TARGET}x':>8} {verdict}")
        print(
            f"\npeak RSS of one read (fresh process, imports subtracted), {small.stat().st_size:,}"
        )
        print(f"bytes at {args.turns // 10:,} turns vs {size:,} at {args.turns:,}:")
        for name in READS:
            a, b = peak_rss(small, name), peak_rss(path, name)
            print(
                f"{name:<16} {a / 1024:>7.1f} MB {b / 1024:>7.1f} MB  "
                f"{a / (args.turns // 10):>5.1f} vs {b / args.turns:>5.1f} kB/turn"
            )


if __name__ == "__main__":
    main()
