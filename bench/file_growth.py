"""Session-file bytes per turn as the debater count grows (issue: files grew with its square).

Run with ``.venv/bin/python bench/file_growth.py``. A scripted debate of N
debaters whose votes never agree runs two full rounds (proposal, critique,
revision, consensus) into a session file; the figure is the file's size over
its turns. The same run with every ``saw`` list stored in full shows what the
compact form saves: in consensus and later proposals each turn sees every
position, so full lists cost bytes in proportion to N on each of N turns.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from unittest.mock import patch

from tui.engine.record import session as session_module
from tui.engine.record.live import LiveSession
from tui.engine.specs.spec import validate_spec
from tui.providers.scripted import ScriptedProvider

COUNTS = (3, 16, 64)
ROUNDS = 2


def spec_raw(debaters: int) -> dict[str, Any]:
    ids = [f"debater{i:02d}" for i in range(debaters)]
    return {
        "debate": {
            "title": "File growth",
            "motion": "Adopt a four-day working week for the platform team.",
            "max_rounds": ROUNDS,
            "consensus_threshold": debaters,
        },
        "debaters": [
            {
                "id": did,
                "model": "scripted",
                "script": {"votes": ["release" if i % 2 else "revise"]},  # never unanimous
            }
            for i, did in enumerate(ids)
        ],
    }


def run(debaters: int, folder: Path) -> tuple[int, int]:
    """(turns, file bytes) of one scripted debate."""
    raw = spec_raw(debaters)
    provider = ScriptedProvider()
    path = folder / f"growth-{debaters}.toml"
    live = LiveSession.start(validate_spec(raw), raw, lambda d: provider, out=path)
    try:
        asyncio.run(live.engine.run())
    finally:
        live.close()
    return len(live.engine.state.turns), path.stat().st_size


def full_saw_lists() -> AbstractContextManager[object]:
    """Store every ``saw`` in full, as files did before the compact form."""
    return patch.object(session_module, "compact_record", lambda record, earlier: record)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=list(COUNTS))
    args = parser.parse_args()
    print(f"debate protocol, {ROUNDS} rounds, scripted debaters")
    print(f"{'debaters':>8} {'turns':>6} {'bytes':>11} {'bytes/turn':>11} {'full saw':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.counts:
            turns, size = run(n, Path(tmp) / "compact")
            with full_saw_lists():
                _, full = run(n, Path(tmp) / "full")
            print(f"{n:>8} {turns:>6} {size:>11,} {size / turns:>11,.0f} {full / turns:>11,.0f}")


if __name__ == "__main__":
    main()
