"""``delphi``: anonymous estimate rounds, decided by the median once the spread is small."""

from __future__ import annotations

import re
import statistics
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_verify_session import Doc, failed, rewrite, verify
from tests.export_schema import validate_export
from tui.cli import main
from tui.engine import SpecError, validate_spec
from tui.engine.protocols import protocol_class
from tui.engine.record.session import load_session
from tui.exitcodes import ExitCode
from tui.render.adr import status, to_adr
from tui.render.export import to_json, to_markdown

EXAMPLE = Path(__file__).resolve().parents[2] / "sessions" / "examples" / "scripted-delphi.toml"
PANEL = ("backend", "qa", "lead")


@pytest.fixture(scope="module")
def converged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("delphi") / "converged.toml"
    assert main(["run", str(EXAMPLE), "--headless", "--out", str(path)]) == ExitCode.DECIDED
    return path


def copied(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / source.name
    target.write_bytes(source.read_bytes())
    return target


def test_a_panel_converges_on_the_median_and_verifies(
    converged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = load_session(converged)
    r = data.result
    assert r is not None
    round_two = [t.content["estimate"] for t in data.turns if t.round == 2]
    assert round_two == [7.0, 8.0, 8.0]
    quartiles = statistics.quantiles(round_two, n=4, method="inclusive")
    assert (r["decision"], r["decision_rule"], r["decided_by"]) == ("8", "converged", "rule")
    assert r["quartiles"] == quartiles == [7.5, 8.0, 8.0]
    # Round 1 (5, 12, 8) was too spread out: (10 - 6.5) / 8 > 0.25, so a second round ran.
    assert [(x["round"], x["converged"]) for x in r["estimate_rounds"]] == [(1, False), (2, True)]
    assert r["estimate_rounds"][0]["spread"] == 0.4375
    code, report = verify(converged, capsys)
    assert code == ExitCode.DECIDED and report["failures"] == []
    names = {c["field"] for c in report["claims"]}
    assert {"median", "quartiles", "spread", "anonymity", "convergence"} <= names


def test_from_round_two_a_panelist_sees_the_last_round_without_ids(converged: Path) -> None:
    data = load_session(converged)
    for turn in data.turns:
        others = set(PANEL) - {turn.speaker}
        assert not any(part in others for label in turn.saw for part in label.split(":"))
        if turn.round == 2:
            assert turn.saw == ["motion", "unit", f"estimate:r1:{turn.speaker}", "panel:r1"]
    spec = data.spec
    protocol = protocol_class(spec)(spec)
    from tui.engine.core.schedule import Slot
    from tui.engine.core.state import DebateState
    from tui.engine.protocols.delphi import ESTIMATE

    state = DebateState(spec, spec.max_rounds)
    for turn in data.turns[:3]:
        state.add(turn)
    items = protocol.context(state, Slot(4, 2, "estimate", "lead", ESTIMATE))
    panel = next(text for label, _, text in items if label == "panel:r1")
    assert "Median 8 engineer-days; quartiles Q1 6.5, Q3 10" in panel
    assert "The last two exports took seven and nine days" in panel  # the rationales
    assert not any(who in panel for who in PANEL)


def test_markdown_and_adr_state_the_estimate_with_unit_and_spread(converged: Path) -> None:
    data = load_session(converged)
    spread = "median 8, Q1 7.5, Q3 8 engineer-days; relative spread 0.0625 (converges at 0.25)"
    for text in (to_markdown(data), to_adr(data)):
        assert "Estimate: 8 engineer-days" in text
        assert spread in text
    exported = validate_export(to_json(data))  # the published schema knows estimate turns
    assert [t["content"]["estimate"] for t in exported["turns"]] == [5, 12, 8, 7, 8, 8]
    assert exported["result"]["quartiles"] == [7.5, 8.0, 8.0]
    adr = to_adr(data)
    assert "status: accepted" in adr  # a decided estimate is the decision, not a rejected vote
    assert '- "8 engineer-days", held by `lead` (turn 3, turn 6); `qa` (turn 5)' in adr
    assert "because the panel's estimates converged on the median" in adr


def test_an_edited_estimate_fails_verify(
    converged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copied(converged, tmp_path)

    def change(doc: Doc) -> None:
        doc["turns"][0]["content"]["estimate"] = 50.0  # backend's first estimate, was 5

    rewrite(path, change)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert ("result.estimate_rounds (round 1)", "median") in failed(report)
    assert ("result.estimate_rounds (round 1)", "quartiles") in failed(report)
    assert not any(f["field"] == "hash" for f in report["failures"])  # the claims caught it


def test_a_forged_decision_or_a_peek_at_another_panelist_is_named(
    converged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copied(converged, tmp_path)

    def change(doc: Doc) -> None:
        doc["result"]["decision"] = "7"
        doc["turns"][3]["saw"].append("estimate:r1:qa")  # turn 4 (backend) saw qa's estimate

    rewrite(path, change)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert {("result", "decision"), ("turn 4", "anonymity")} <= failed(report)


def spread_out(tmp_path: Path) -> Path:
    raw = tomllib.loads(EXAMPLE.read_text("utf-8"))
    raw["debate"]["max_rounds"] = 2
    for debater, numbers in zip(raw["debaters"], ([2, 3], [20, 18], [9, 9]), strict=True):
        debater["script"]["turns"] = [
            {"estimate": n, "rationale": f"My count of the work gives {n} days."} for n in numbers
        ]
    import tomli_w

    spec = tmp_path / "spread.toml"
    spec.write_text(tomli_w.dumps(raw), "utf-8")
    return spec


def test_no_convergence_escalates_and_the_operator_decides_a_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "spread-session.toml"
    run = main(["run", str(spread_out(tmp_path)), "--headless", "--out", str(session)])
    assert run == ExitCode.UNRESOLVED
    result: dict[str, Any] | None = load_session(session).result
    assert result is not None and result["decision"] == "escalate"
    assert status(load_session(session)) == "proposed"
    assert result["decision_rule"] == "max_rounds_exhausted"
    capsys.readouterr()
    refused = main(["decide", str(session), "--value", "soon", "--rationale", "Gut feeling."])
    assert refused == ExitCode.BAD_INPUT
    assert "'soon' is not a number (engineer-days)" in capsys.readouterr().err
    defer = ["decide", str(session), "--value", "escalate", "--rationale", "Ask finance first."]
    assert main(defer) == ExitCode.UNRESOLVED  # deferred: an estimate waits like any decision
    ok = ["decide", str(session), "--value", "9.5", "--rationale", "The lead's history holds."]
    assert main(ok) == ExitCode.DECIDED
    decided = load_session(session).result
    assert decided is not None
    assert (decided["decision"], decided["decision_rule"]) == ("9.5", "operator_decision")
    assert status(load_session(session)) == "accepted"
    capsys.readouterr()
    assert main(["verify", str(session)]) == ExitCode.DECIDED


def test_spec_rules_name_unit_convergence_and_panel_size() -> None:
    raw = tomllib.loads(EXAMPLE.read_text("utf-8"))
    del raw["debate"]["unit"]
    raw["debate"]["convergence"] = "tight"
    raw["debaters"] = raw["debaters"][:1]
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    text = "\n".join(info.value.problems)
    assert "debate.unit: required for delphi" in text
    assert "debate.convergence" in text
    assert "debaters: a Delphi panel needs at least two panelists" in text


def test_decide_names_the_flag_an_estimate_takes_and_refuses_the_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "spread-session.toml"
    assert main(["run", str(spread_out(tmp_path)), "--headless", "--out", str(session)]) == 3
    before = session.read_bytes()
    capsys.readouterr()
    assert main(["decide", str(session), "--value", "abc", "--rationale", "Gut feeling."]) == 2
    err = capsys.readouterr().err
    assert "--value: 'abc' is not a number (engineer-days)" in err and "--vote" not in err
    assert main(["decide", str(session), "--vote", "8", "--rationale", "The lead's history."]) == 2
    err = capsys.readouterr().err
    assert (
        "--vote: this session decides the estimate: a number in engineer-days, at least 0; give --value"
        in err
    )
    assert session.read_bytes() == before


def test_decide_refuses_value_on_a_session_that_decides_a_vote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.batch_specs import unresolved
    from tests.commands.test_inbox import run_specs

    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    before = target.read_bytes()
    capsys.readouterr()
    assert main(["decide", str(target), "--value", "8", "--rationale", "Roll back first."]) == 2
    err = capsys.readouterr().err
    assert "--value: this session decides a vote (release, revise, escalate); give --vote" in err
    assert target.read_bytes() == before


def test_the_inbox_shows_no_vote_tally_for_an_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Delphi panel casts no votes: 'release 0, revise 0, escalate 0' said nothing."""
    session = tmp_path / "sessions" / "spread-session.toml"
    assert main(["run", str(spread_out(tmp_path)), "--headless", "--out", str(session)]) == 3
    capsys.readouterr()
    assert main(["inbox", "--sessions-dir", str(session.parent)]) == 0
    out = capsys.readouterr().out
    assert session.name in out
    assert "release 0" not in out and "no votes" in out


def test_the_least_estimate_the_unit_allows_holds_for_the_operator_and_the_panel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``minimum = 0`` (the shipped example's, as days cannot be negative): ``--value -5``
    is refused with the reason, a panelist's negative estimate is asked again and then
    recorded invalid, and verify refuses a valid estimate forged below it."""
    session = tmp_path / "spread-session.toml"
    assert main(["run", str(spread_out(tmp_path)), "--headless", "--out", str(session)]) == 3
    before = session.read_bytes()
    capsys.readouterr()
    low = ["decide", str(session), "--value", "-5", "--rationale", "The lead's history holds."]
    assert main(low) == ExitCode.BAD_INPUT
    assert "--value: -5 is below the least estimate the spec allows (0 engineer-days)" in (
        capsys.readouterr().err
    )
    assert session.read_bytes() == before
    zero = ["decide", str(session), "--value", "0", "--rationale", "It ships with the old page."]
    assert main(zero) == ExitCode.DECIDED

    raw = tomllib.loads(spread_out(tmp_path).read_text("utf-8"))
    raw["debaters"][0]["script"]["turns"][0] = {
        "estimate": -3,
        "rationale": "Deleting the old export saves more than the new one costs.",
    }
    import tomli_w

    negative = tmp_path / "negative.toml"
    negative.write_text(tomli_w.dumps(raw), "utf-8")
    out = tmp_path / "negative-session.toml"
    main(["run", str(negative), "--headless", "--out", str(out)])
    first = load_session(out).turns[0]
    assert first.invalid and "below the least estimate" in (first.error or "")
    capsys.readouterr()
    code, report = verify(out, capsys)
    assert report["failures"] == [] and code in (ExitCode.DECIDED, ExitCode.UNRESOLVED)

    (tmp_path / "forged").mkdir()
    forged = copied(session, tmp_path / "forged")

    def change(doc: Doc) -> None:
        doc["turns"][0]["content"]["estimate"] = -2.0

    rewrite(forged, change)
    code, report = verify(forged, capsys)
    assert code == ExitCode.VERIFY_FAILED
    (refused,) = [
        f for f in report["failures"] if (f["where"], f["field"]) == ("turn 1", "content")
    ]
    assert "below the least estimate the spec allows" in refused["detail"]


def test_a_minimum_that_is_no_number_is_named_by_key_path() -> None:
    raw = tomllib.loads(EXAMPLE.read_text("utf-8"))
    raw["debate"]["minimum"] = "zero"
    with pytest.raises(SpecError) as info:
        validate_spec(raw)
    assert any(p.startswith("debate.minimum") for p in info.value.problems)


def test_the_result_table_shows_the_estimates_figures_and_no_empty_tally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A panel casts no votes: the printed result has no ``release=0, revise=0`` row and no
    empty ``final_votes``; each round's median, quartiles and spread read as figures."""
    out = tmp_path / "panel.toml"
    assert main(["run", str(EXAMPLE), "--headless", "--out", str(out)]) == ExitCode.DECIDED
    printed = capsys.readouterr().out
    table = " ".join(re.sub(r"[│┌┐└┘├┤┬┴─]", " ", printed[printed.index("Result") :]).split())
    assert "vote_tally" not in table and "release=0" not in table
    assert "final_votes" not in table
    assert "r1 median 8 (Q1 6.5, Q3 10), spread 0.4375" in table
    assert "r2 median 8 (Q1 7.5, Q3 8), spread 0.0625, converged" in table
    assert "'quartiles'" not in table


def test_the_record_and_its_exports_hold_no_tally_for_an_estimate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The panel votes on nothing: the session's result, the JSON export and the ADR carry
    no ``release 0, revise 0, escalate 0``, and verify still passes."""
    out = tmp_path / "panel.toml"
    assert main(["run", str(EXAMPLE), "--headless", "--out", str(out)]) == ExitCode.DECIDED
    data = load_session(out)
    assert data.result is not None
    assert "vote_tally" not in data.result and "final_votes" not in data.result
    exported = validate_export(to_json(data))
    assert "vote_tally" not in exported["result"] and "final_votes" not in exported["result"]
    assert "release" not in to_adr(data)
    capsys.readouterr()
    code, report = verify(out, capsys)
    assert code == ExitCode.DECIDED and report["failures"] == []


def test_the_operator_is_told_the_least_estimate_before_typing_one() -> None:
    """The decide modal's prompt names the floor the engine will hold the value to."""
    raw = tomllib.loads(EXAMPLE.read_text("utf-8"))
    spec = validate_spec(raw)
    assert protocol_class(spec).value_prompt(spec) == (
        "the estimate: a number in engineer-days, at least 0"
    )
    del raw["debate"]["minimum"]
    unbounded = validate_spec(raw)
    assert protocol_class(unbounded).value_prompt(unbounded) == (
        "the estimate: a number in engineer-days"
    )
