"""``moot resume --headless`` prints the last few recorded turns, and counts the rest.

Printing every recorded turn of a long session again took longer than reading the
file; what the run goes on from is the last few turns, and the count says how many
more the file holds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import tomli_w

from tests.helpers import debate_raw
from tui.cli import main
from tui.commands.headless import RESUMED_SHOWN
from tui.engine.record.session import load_session

COMMIT = "# moot:commit\n"
TURNS = 20  # two debaters that never agree, ten rounds of one phase


def test_a_resume_shows_the_last_recorded_turns_and_counts_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, max_rounds=10, phases=["proposal"])
    spec = tmp_path / "spec.toml"
    spec.write_text(tomli_w.dumps(raw))
    out = tmp_path / "s.toml"
    assert main(["run", str(spec), "--headless", "--out", str(out)]) == 3
    records = out.read_text(encoding="utf-8").split(COMMIT)
    assert "[result]" in records[-2]
    out.write_text(COMMIT.join(records[:-2]) + COMMIT, encoding="utf-8")  # cut before it
    capsys.readouterr()

    assert main(["resume", str(out), "--headless"]) == 3
    shown = [line for line in capsys.readouterr().out.splitlines() if line.startswith("(resumed)")]
    hidden = TURNS - RESUMED_SHOWN
    assert shown[0] == f"(resumed) {hidden} earlier turns not shown"
    assert len(shown) == 1 + RESUMED_SHOWN
    recorded = load_session(out).turns[TURNS - RESUMED_SHOWN : TURNS]  # the last ones, in order
    for line, turn in zip(shown[1:], recorded, strict=True):
        assert line.split()[1:4] == [f"r{turn.round}", turn.phase, turn.speaker]
    assert load_session(out).result is not None
