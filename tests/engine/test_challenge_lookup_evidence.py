"""Challenge evidence may quote a lookup: with ``source = "L1"`` the challenge's evidence
is admitted only when found verbatim in that recorded result, by code and by verify."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_lookups import DESIGN, challenge_raw, reviewer_turn, run, turns_of
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "design.md").write_text(DESIGN)
    return tmp_path


def review(challenges: list[dict[str, Any]]) -> dict[str, Any]:
    turn = reviewer_turn("Payments deduplicates on the event id")
    turn["challenges"] = challenges
    return turn


def challenge(
    evidence: str, source: str = "", concern: str = "A replay charges twice."
) -> dict[str, Any]:
    out = {
        "category": "correctness",
        "concern": concern,
        "evidence": evidence,
        "severity": "critical",
        "recommendation": "Key captures on the order id.",
    }
    if source:
        out["source"] = source
    return out


def test_challenge_evidence_quoting_a_lookup_is_admitted_only_verbatim(folder: Path) -> None:
    path = run(
        challenge_raw(
            review(
                [
                    challenge("deduplicates on the event id for 24 hours", "L1"),
                    challenge("deduplicates on the order id forever", "L1", "Orders never expire."),
                    challenge("deduplicates on the event id for 24 hours", "L7", "No such lookup."),
                    challenge("nothing of refunds", concern="Refunds are unplanned."),  # as before
                ]
            )
        ),
        folder,
    )
    turn = next(t for t in turns_of(path) if t.speaker == "reviewer")
    assert not turn.invalid, turn.error
    assert turn.content["challenges"][0]["source"] == "L1"
    assert "source" not in turn.content["challenges"][3]
    assert turn.derived["challenge_evidence"] == [
        {"id": "C1.1", "source": "L1", "admitted": True, "why": "found verbatim", "lines": [2, 2]},
        {
            "id": "C1.2",
            "source": "L1",
            "admitted": False,
            "why": "not found verbatim in the result of L1",
        },
        {
            "id": "C1.3",
            "source": "L7",
            "admitted": False,
            "why": "no lookup 'L7' of this turn returned a result",
        },
    ]
    result = load_session(path).result or {}
    raised = [c["id"] for c in result["challenges"]]
    assert raised == ["C1.1", "C1.4"]  # a challenge whose lookup quote fails is not raised
    assert verify_file(path).ok


def test_verify_catches_a_challenge_quote_edited_after_the_fact(folder: Path) -> None:
    path = run(
        challenge_raw(review([challenge("deduplicates on the event id for 24 hours", "L1")])),
        folder,
    )
    text = path.read_text()
    said = 'evidence = "deduplicates on the event id for 24 hours"'
    at = text.index(said, text.index(said) + 1)  # the turn's: after the script's in the spec
    edited = text[:at] + said.replace("24", "48") + text[at + len(said) :]
    path.write_text(edited)
    failures = {(c.where, c.field) for c in verify_file(path).failures}
    assert ("turn 1", "derived.challenge_evidence") in failures, failures


def test_a_card_says_which_lookup_a_challenge_quotes_and_whether_it_holds(folder: Path) -> None:
    from tui.render.present import present

    path = run(
        challenge_raw(
            review(
                [
                    challenge("deduplicates on the event id for 24 hours", "L1"),
                    challenge("deduplicates on the order id forever", "L1", "Orders never expire."),
                ]
            )
        ),
        folder,
    )
    turn = next(t for t in turns_of(path) if t.speaker == "reviewer")
    facts = [
        (f.label, f.value)
        for section in present(turn)
        for item in getattr(section, "items", ())
        for f in item.details
    ]
    assert ("evidence (L1: found verbatim)", "deduplicates on the event id for 24 hours") in facts
    assert (
        "evidence (L1: not admitted)",
        "deduplicates on the order id forever (not found verbatim in the result of L1)",
    ) in facts


def test_the_adr_lists_a_challenge_quote_with_the_lookup_behind_it(folder: Path) -> None:
    from tui.render.adr import to_adr

    path = run(
        challenge_raw(
            review(
                [
                    challenge("deduplicates on the event id for 24 hours", "L1"),
                    challenge("deduplicates on the order id forever", "L1", "Orders never expire."),
                ]
            )
        ),
        folder,
    )
    adr = to_adr(load_session(path))
    assert (
        "- challenge `C1.1`, turn 1 (`reviewer`), quoted from `L1` line 2: "
        "“deduplicates on the event id for 24 hours” (lookup `files.read`(path=design.md)"
    ) in adr
    assert "C1.2`, turn 1" not in adr.split("### Evidence")[1].split("###")[0]
