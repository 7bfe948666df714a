"""moot decide: an operator decision from a script, by the console modal's rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.batch_specs import blocked, decided, unresolved, write
from tests.commands.test_inbox import run_specs
from tests.helpers import moot_in_process as moot
from tests.helpers import run_engine, with_script
from tui.commands.inbox import awaiting
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file


def test_decide_then_the_inbox_no_longer_lists_it(tmp_path: Path) -> None:
    sessions = run_specs(tmp_path, {"split": unresolved(), "other": unresolved("Other split")})
    folder = tmp_path / "sessions"
    assert {a.path for a in awaiting(folder)} == set(sessions.values())
    target = sessions["split"]
    done = moot("decide", str(target), "--vote", "revise", "--rationale", "Roll back first.")
    assert done.returncode == 0, done.stderr
    assert "revise (operator_decision, by operator)" in done.stdout
    data = load_session(target)
    assert data.result is not None
    assert data.result["decision"] == "revise"
    assert data.result["decided_by"] == "operator"
    assert data.result["decision_rule"] == "operator_decision"
    assert data.result["rationale"] == "Roll back first."
    assert data.result["turns"] == len(data.turns)  # the record still agrees with the file
    decides = [a for a in data.actions if a["action"] == "decide"]
    assert [(a["vote"], a["rationale"]) for a in decides] == [("revise", "Roll back first.")]
    assert verify_file(target).ok
    assert [a.path for a in awaiting(folder)] == [sessions["other"]]
    again = moot("decide", str(target), "--vote", "release", "--rationale", "Changed my mind.")
    assert again.returncode == 2 and "already decided" in again.stderr


@pytest.mark.parametrize(
    ("vote", "rationale", "reason"),
    [
        ("ship", "It is fine.", "is not one of release, revise, escalate"),
        ("release", "   ", "a rationale in words"),
        ("release", "-- 42 !", "a rationale in words"),
        ("release", "x", "a rationale in words"),  # a letter is not a statement
        ("release", "revise", "is a vote, not a statement"),
    ],
)
def test_refused_decisions_leave_the_file_untouched(
    tmp_path: Path, vote: str, rationale: str, reason: str
) -> None:
    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    before = target.read_bytes()
    done = moot("decide", str(target), "--vote", vote, "--rationale", rationale)
    assert done.returncode == 2
    assert reason in done.stderr and "Traceback" not in done.stderr
    assert target.read_bytes() == before


def test_a_veto_is_enforced_with_its_reason(tmp_path: Path) -> None:
    target = run_specs(tmp_path, {"blocked": blocked()})["blocked"]
    result = load_session(target).result
    assert result is not None and result["decision_rule"] == "release_gate"
    before = target.read_bytes()
    done = moot("decide", str(target), "--vote", "release", "--rationale", "Ship anyway.")
    assert done.returncode == 2
    assert "blocking mode" in done.stderr and "C1.1" in done.stderr
    assert target.read_bytes() == before
    ok = moot("decide", str(target), "--vote", "revise", "--rationale", "Make it reversible.")
    assert ok.returncode == 0, ok.stderr
    result = load_session(target).result
    assert result is not None and result["decided_by"] == "operator"
    assert verify_file(target).ok


def test_a_decided_or_unfinished_session_is_not_awaiting(tmp_path: Path) -> None:
    target = run_specs(tmp_path, {"ok": decided()})["ok"]
    done = moot("decide", str(target), "--vote", "revise", "--rationale", "No.")
    assert done.returncode == 2 and "already decided: release" in done.stderr
    spec = write(tmp_path / "spec.toml", decided())
    wrong = moot("decide", str(spec), "--vote", "revise", "--rationale", "No.")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    both = moot("decide", str(target), "--vote", "revise", "--rationale", "x y", "--extend")
    assert both.returncode == 2 and "--extend" in both.stderr


def test_extend_adds_a_round_and_continues_headless(tmp_path: Path) -> None:
    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    first = load_session(target)
    assert first.result is not None and first.result["rounds_run"] == 1
    done = moot("decide", str(target), "--extend")
    assert done.returncode == 3, done.stderr  # still split after another round
    data = load_session(target)
    assert data.result is not None
    assert data.result["rounds_run"] == 2 and data.result["max_rounds"] == 2
    assert len(data.turns) == 2 * len(first.turns)
    assert [a["action"] for a in data.actions] == ["extend"]
    assert verify_file(target).ok
    assert [a.path for a in awaiting(tmp_path / "sessions")] == [target]


def test_the_console_and_the_cli_share_the_rationale_rule() -> None:
    engine, _ = run_engine(unresolved())
    with pytest.raises(ValueError, match="rationale in words"):
        engine.decide("revise", "-- 42 !")
    assert engine.decide("revise", "Roll back first.").decided_by == "operator"


def test_deciding_a_run_a_provider_failure_stopped_makes_no_call(tmp_path: Path) -> None:
    failing = with_script(unresolved(), "b", fail=[1])
    target = run_specs(tmp_path, {"failed": failing})["failed"]
    result = load_session(target).result
    assert result is not None and result["decision_rule"] == "provider_failure"
    done = moot("decide", str(target), "--vote", "release", "--rationale", "Ship it, b agreed.")
    assert done.returncode == 0, done.stderr
    data = load_session(target)
    assert data.result is not None and data.result["decided_by"] == "operator"
    assert len(data.turns) == 1  # the failed turn was not asked for again
    assert verify_file(target).ok


def test_escalate_defers_it_stays_in_the_inbox_with_the_rationale(tmp_path: Path) -> None:
    """The operator's own escalate has one meaning: deferred to a person, still unresolved."""
    target = run_specs(tmp_path, {"split": unresolved()})["split"]
    folder = tmp_path / "sessions"
    done = moot("decide", str(target), "--vote", "escalate", "--rationale", "Needs the DBA.")
    assert done.returncode == 3, done.stderr  # unresolved, as the console's exit code says
    assert "deferred" in done.stdout and "decided:" not in done.stdout
    data = load_session(target)
    assert data.result is not None
    assert (data.result["decision"], data.result["decision_rule"]) == (
        "escalate",
        "operator_decision",
    )
    assert data.result["rationale"] == "Needs the DBA."
    [waiting] = awaiting(folder)
    assert waiting.path == target and waiting.deferred and waiting.rationale == "Needs the DBA."
    listed = moot("inbox", "--sessions-dir", str(folder))
    assert "deferred: Needs the DBA." in listed.stdout
    report = verify_file(target)
    assert report.ok
    assert any("deferred" in c.detail for c in report.claims if c.where == "result")
    markdown = moot("export", str(target))
    assert "deferred by the operator" in markdown.stdout
    later = moot("decide", str(target), "--vote", "revise", "--rationale", "The DBA said no.")
    assert later.returncode == 0, later.stderr  # a person decides it later
    assert awaiting(folder) == []
    assert verify_file(target).ok
