"""The headless result table: each protocol sums up its own result fields in one line."""

from __future__ import annotations

import io
import re
from typing import Any

from rich.console import Console

from tui.commands.headless import report_table


def printed(result: dict[str, Any]) -> str:
    """The table on one wide line per row, borders blanked and whitespace folded."""
    out = io.StringIO()
    Console(width=1000, file=out).print(report_table(result))
    return " ".join(re.sub(r"[│┌┐└┘├┤┬┴─╭╮╰╯]", " ", out.getvalue()).split())


def test_a_challenge_result_lists_each_challenge_and_cuts_the_artifact() -> None:
    table = printed(
        {
            "protocol": "challenge",
            "challenges": [
                {"id": "C1", "severity": "critical", "status": "resolved", "concern": "x"},
                {"id": "C2", "severity": "minor", "status": "open", "concern": "y"},
            ],
            "final_artifact": "a" * 350,
        }
    )
    assert "challenges C1 critical resolved; C2 minor open" in table
    assert "a" * 300 + "…" in table and "a" * 301 not in table
    assert "'concern'" not in table


def test_a_refine_result_lists_each_judge_rounds_winner_and_streak() -> None:
    rounds = [
        {"round": 1, "winner": "challenger", "streak": 0, "judges": {}},
        {"round": 2, "winner": "incumbent", "streak": 1, "judges": {}},
    ]
    table = printed({"protocol": "refine", "judge_rounds": rounds, "winning_candidate": "Pager"})
    assert "judge_rounds r1 challenger (streak 0); r2 incumbent (streak 1)" in table
    assert "winning_candidate Pager" in table


def test_a_field_no_protocol_claims_shows_as_it_is() -> None:
    """Another protocol's field name means nothing to this one: shown as stored."""
    table = printed({"protocol": "debate", "challenges": ["C1"], "tie_rule": "first listed"})
    assert "challenges C1" in table
    assert "tie_rule first listed" in table
