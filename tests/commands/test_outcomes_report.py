"""``moot outcomes``: a folder of sessions, outcomes added a few at a time, read and plotted.

The folder is made by scripted runs and ``moot outcome`` as a person would; every
figure expected below is worked out by hand from what each session decided, so
the report is checked against the definitions, not against itself.
"""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.batch_specs import decided, unresolved
from tests.commands.test_inbox import run_specs
from tests.helpers import adversary_raw, debate_raw
from tui.cli import main
from tui.exitcodes import ExitCode

Z = 1.959963984540054  # the 97.5th percentile of the normal distribution


def wilson_by_hand(k: int, n: int) -> list[float]:
    """(p + z²/2n ± z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n), rounded as the report rounds."""
    p = k / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n * n)) / (1 + Z**2 / n)
    return [round(centre - half, 4), round(centre + half, 4)]


def outcome(path: Path, word: str, note: str) -> None:
    assert main(["outcome", str(path), f"--{word}", "--note", note]) == ExitCode.DECIDED


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Six session files:

    - unanimous (debate): a, b, c vote release, 3 of 3; it held;
    - two-thirds (debate): a, b release, c revise, 2 of 3; it failed;
    - operator (debate): a release, b revise, escalated, the operator decided revise
      (1 of 2 votes); it held;
    - adversary: author and critic release, 2 of 2; it failed, then was found mixed
      (the latest counts: mixed, counted apart);
    - later (debate): agreed, no outcome yet;
    - tampered (debate): agreed, held, and its note edited afterwards: left out.
    """
    sessions = run_specs(
        tmp_path,
        {
            "unanimous": decided("Unanimous"),
            "twothirds": debate_raw(
                {"a": ["release"], "b": ["release"], "c": ["revise"]}, title="Two of three"
            ),
            "operator": unresolved("Operator"),
            "adversary": adversary_raw(["release"]),
            "later": decided("Later"),
            "tampered": decided("Tampered"),
        },
    )
    decide = ["decide", str(sessions["operator"]), "--vote", "revise"]
    assert main([*decide, "--rationale", "Revise it first."]) == ExitCode.DECIDED
    outcome(sessions["unanimous"], "held", "It held all quarter.")
    outcome(sessions["twothirds"], "failed", "It fell over in week two.")
    outcome(sessions["operator"], "held", "The revision held.")
    outcome(sessions["adversary"], "failed", "Looked broken at first.")
    outcome(sessions["adversary"], "mixed", "Half of it held after all.")
    outcome(sessions["tampered"], "failed", "It failed badly.")
    tampered = sessions["tampered"]
    tampered.write_text(
        tampered.read_text("utf-8").replace("It failed badly.", "It held nicely."), "utf-8"
    )
    return tmp_path / "sessions"


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, Any], str]:
    capsys.readouterr()
    assert main(["outcomes", *args, "--json"]) == ExitCode.DECIDED
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def test_the_figures_match_a_hand_computed_folder(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got, err = report(capsys, str(folder))
    tampered = next(folder.glob("*-tampered.toml"))
    assert [x["path"] for x in got["left_out"]] == [str(tampered)]
    assert "moot verify fails" in got["left_out"][0]["why"]
    assert f"left out {tampered}" in err
    # Tally shares of the decided option, with y = 1 held, 0 failed (mixed counted apart):
    # unanimous 3/3 held, two-thirds 2/3 failed, operator 1/2 held.
    brier = ((1 - 1) ** 2 + (2 / 3 - 0) ** 2 + (1 / 2 - 1) ** 2) / 3
    # Each debater's final vote: 1 if it was the decision, else 0.
    # a: unanimous 1 (held: 0), two-thirds 1 (failed: 1), operator release≠revise 0 (held: 1)
    # b: 0, 1, and revise = revise 1 (held: 0); c: 0, and revise≠release 0 (failed: 0).
    assert got == {
        "files": 6,
        "left_out": got["left_out"],
        "decisions": 5,
        "with_outcome": 4,
        "held": 2,
        "failed": 1,
        "mixed": 1,
        "held_share": round(2 / 3, 4),
        "ci95": wilson_by_hand(2, 3),
        "brier_tally": round(brier, 4),
        "brier_decisions": 3,
        "debaters": {
            "a": {"votes": 3, "brier": round(2 / 3, 4)},
            "b": {"votes": 3, "brier": round(1 / 3, 4)},
            "c": {"votes": 2, "brier": 0.0},
        },
        "calibration": [
            {"from": 0.4, "to": 0.6, "decisions": 1, "forecast": 0.5, "held": 1.0},
            {"from": 0.6, "to": 0.8, "decisions": 1, "forecast": round(2 / 3, 4), "held": 0.0},
            {"from": 0.8, "to": 1.0, "decisions": 1, "forecast": 1.0, "held": 1.0},
        ],
    }
    assert wilson_by_hand(2, 3) == [0.2077, 0.9385]  # the formula, checked against a table


def test_by_protocol_groups_the_decisions(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    got, _ = report(capsys, str(folder), "--by", "protocol")
    assert got["by"] == "protocol" and list(got["groups"]) == ["adversary", "debate"]
    adversary, debate = got["groups"]["adversary"], got["groups"]["debate"]
    assert (adversary["decisions"], adversary["with_outcome"], adversary["mixed"]) == (1, 1, 1)
    assert adversary["held_share"] is None and adversary["brier_tally"] is None
    assert (debate["decisions"], debate["held"], debate["failed"]) == (4, 2, 1)
    assert debate["ci95"] == wilson_by_hand(2, 3) and debate["brier_decisions"] == 3


def test_by_decider_and_debater(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    got, _ = report(capsys, str(folder), "--by", "decider")
    assert {k: (g["held"], g["failed"]) for k, g in got["groups"].items()} == {
        "operator": (1, 0),
        "rule": (1, 1),
    }
    got, _ = report(capsys, str(folder), "--by", "debater")
    a = got["groups"]["a"]
    assert (a["decisions"], a["held"], a["failed"]) == (4, 2, 1)  # unanimous, 2/3, operator, later
    assert a["debaters"]["a"]["brier"] == round(2 / 3, 4)


def test_the_terminal_report_and_the_svg(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svg = tmp_path / "calibration.svg"
    capsys.readouterr()
    assert main(["outcomes", str(folder), "--out", str(svg)]) == ExitCode.DECIDED
    out = capsys.readouterr().out
    assert "4 decisions with an outcome, of 5 decided in 6 session files" in out
    assert "95% Wilson interval 20.8%–93.8%" in out
    assert "calibration" in out
    assert svg.read_text("utf-8").startswith("<svg") and "calibration" in svg.read_text("utf-8")


def test_bad_paths_are_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere"
    assert main(["outcomes", str(missing)]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "no such file or folder" in err and "Traceback" not in err
    assert main(["outcomes", str(tmp_path), "--out", str(missing / "x.svg")]) == ExitCode.BAD_INPUT
    assert "no such folder" in capsys.readouterr().err


def test_an_empty_folder_reports_nothing_to_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got, _ = report(capsys, str(tmp_path))
    assert (got["files"], got["decisions"], got["held_share"], got["ci95"]) == (0, 0, None, None)


def test_the_tampered_file_is_what_verify_refuses(folder: Path) -> None:
    """The left-out file is the one whose outcome was edited: its stored note says held."""
    tampered = next(folder.glob("*-tampered.toml"))
    assert tomllib.loads(tampered.read_text("utf-8"))["outcomes"][0]["note"] == "It held nicely."
    assert main(["verify", str(tampered)]) == ExitCode.VERIFY_FAILED
