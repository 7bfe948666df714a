"""Save ``docs/console.svg``: the live console caught mid-debate, for the README.

    .venv/bin/python docs/screenshot.py [--theme moot-dark] [--out docs/console.svg]

The screen is built the way the snapshot tests build theirs: scripted debaters
with no streaming delay but the third, which streams slowly, so the picture shows
two finished turns, one speaker mid-sentence, the timeline and the tally. Nothing is written outside a temporary folder except the SVG.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import tomli_w

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SIZE = (140, 40)
SPEC = {
    "debate": {
        "title": "Ship the migration without a rollback check?",
        "motion": "Ship the database migration tonight without a rollback check.",
        "protocol": "debate",
        "max_rounds": 2,
        "consensus_threshold": 3,
        "parallel": False,
    },
    "debaters": [
        {
            "id": "planner",
            "model": "scripted",
            "family": "openai",
            "role": "Argues for shipping now.",
            "script": {
                "votes": ["release"],
                "stances": ["Ship it tonight: the migration only adds nullable columns."],
                "rationales": [
                    "Nothing reads the new columns yet, so a failed migration "
                    "leaves the old code path untouched."
                ],
            },
        },
        {
            "id": "critic",
            "model": "scripted",
            "family": "anthropic",
            "role": "Looks for what breaks in production.",
            "script": {
                "votes": ["revise"],
                "stances": ["Rehearse the rollback on a staging copy first."],
                "rationales": [
                    "The backfill takes a table lock for minutes; without a "
                    "tested rollback, an abort means a restore from backup."
                ],
            },
        },
        {
            "id": "operator",
            "model": "scripted",
            "family": "google",
            "role": "Runs the on-call rotation.",
            "script": {
                "votes": ["escalate"],
                "token_delay_ms": 120,
                "stances": [
                    "Hold until Monday: two people are on call tonight and the "
                    "runbook has no abort step for the backfill."
                ],
                "rationales": [
                    "Shipping is fine; shipping without a rehearsed way back "
                    "on a thin rotation is the risk."
                ],
            },
        },
    ],
}


async def capture(out: Path, theme: str) -> Path:
    from tui.app.app import MootApp
    from tui.providers.scripted import ScriptedProvider

    provider = ScriptedProvider()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["MOOT_CONFIG_DIR"] = str(Path(tmp) / "config")
        spec_path = Path(tmp) / "spec.toml"
        spec_path.write_text(tomli_w.dumps(SPEC), encoding="utf-8")
        app = MootApp(
            spec_path=str(spec_path),
            sessions_dir=Path(tmp) / "sessions",
            examples_dir=Path(tmp) / "no-examples",
            theme=theme,
            provider_for=lambda _debater: provider,
        )
        async with app.run_test(size=SIZE) as pilot:
            deadline = time.monotonic() + 20
            while True:
                screen = app.debate_screen()
                entry = screen.timeline.entries.get(2) if screen is not None else None
                streaming = screen.pane("operator").streaming if entry is not None else None
                if (
                    entry.status == "speaking"
                    and len(screen.turns) == 2
                    and streaming is not None
                    and len(streaming.text) > 90
                ):
                    break
                if time.monotonic() > deadline:
                    raise SystemExit("the debate never reached the screenshot moment")
                await pilot.pause(0.02)
            app.clear_notifications()
            await pilot.pause(0.1)
            out.parent.mkdir(parents=True, exist_ok=True)
            app.save_screenshot(filename=out.name, path=str(out.parent))
            screen.close_session()
            app.exit()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--theme", default="moot-dark")
    parser.add_argument("--out", default=str(REPO / "docs" / "console.svg"))
    args = parser.parse_args()
    out = asyncio.run(capture(Path(args.out), args.theme))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
