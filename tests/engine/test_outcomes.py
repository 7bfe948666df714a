"""Outcome records: what became of a decision, appended after the result, signed, verified.

``moot outcome`` is run as a person would, on sessions written by scripted runs;
every forgery of an outcome is tried the three ways tests/engine/test_signing.py tries
a record's (author's signatures kept, stripped, or the chain re-signed).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.batch_specs import decided, unresolved
from tests.batch_specs import write as write_spec
from tests.commands.test_inbox import run_specs
from tests.engine.test_signing import FIXTURES, FORGER, rechain, write
from tui.cli import main
from tui.engine.basics.errors import SessionError
from tui.engine.record.live import LiveSession
from tui.engine.record.session import SessionStore, load_session
from tui.engine.record.verify import verify_file
from tui.engine.specs.spec import read_spec_file
from tui.exitcodes import ExitCode
from tui.providers.scripted import ScriptedProvider


def outcome(path: Path, word: str, note: str, *at: str) -> int:
    return main(["outcome", str(path), f"--{word}", "--note", note, *(("--at", *at) if at else ())])


def report(
    path: Path, capsys: pytest.CaptureFixture[str], *flags: str
) -> tuple[int, dict[str, Any]]:
    capsys.readouterr()
    code = main(["verify", str(path), "--json", *flags])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A decided session (three debaters agree on release), signed by this test's key."""
    return run_specs(tmp_path, {"agreed": decided("Agreed")})["agreed"]


def test_outcomes_are_appended_after_the_result_signed_and_verified(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = session.read_bytes()
    assert outcome(session, "failed", "The cache fell over under load in week two.") == 0
    assert "recorded: failed" in capsys.readouterr().out
    tomorrow = (datetime.now(UTC) + timedelta(hours=20)).date().isoformat()
    assert outcome(session, "held", "Fixed by a bigger pool; it held since.", tomorrow) == 0
    after = session.read_bytes()
    assert after.startswith(before)  # appended: the decision and all before it as signed
    doc = tomllib.loads(after.decode("utf-8"))
    first, second = doc["outcomes"]
    assert (first["outcome"], second["outcome"]) == ("failed", "held")
    assert second["at"] == tomorrow and second["note"] == "Fixed by a bigger pool; it held since."
    assert first["hash"] != second["hash"] and first["signature"] and second["signature"]
    data = load_session(session)
    assert [o["outcome"] for o in data.outcomes] == ["failed", "held"]  # the latest counts
    assert [r.name for r in data.records][-3:] == ["result", "outcome 1", "outcome 2"]
    code, checked = report(session, capsys, "--trusted")
    assert code == ExitCode.DECIDED, checked["failures"]
    claims = {(c["where"], c["field"]) for c in checked["claims"]}
    for where in ("outcome 1", "outcome 2"):
        assert {
            (where, f) for f in ("hash", "signature", "result", "outcome", "note", "at")
        } <= claims
    assert checked["signature"]["signers"][0]["last"] == "outcome 2"


def test_nothing_but_an_outcome_is_written_after_one(session: Path) -> None:
    """Its signature covers every record before it: a resume may not rewrite the result."""
    assert outcome(session, "held", "It held through the quarter.") == 0
    before = session.read_bytes()
    store, _ = SessionStore.open_existing(session)
    try:
        with pytest.raises(SessionError, match="outcome recorded after it"):
            store.clear_result()
    finally:
        store.close()
    assert session.read_bytes() == before
    assert verify_file(session).ok


def _awaiting(tmp_path: Path) -> Path:
    return run_specs(tmp_path, {"split": unresolved()})["split"]


def _interrupted(tmp_path: Path) -> Path:
    """Started and stopped before any turn: no result."""
    spec, raw = read_spec_file(write_spec(tmp_path / "spec.toml", decided()))
    live = LiveSession.start(spec, raw, lambda d: ScriptedProvider(), directory=tmp_path)
    live.close()
    return live.store.path


def _edited(tmp_path: Path) -> Path:
    path = run_specs(tmp_path, {"agreed": decided()})["agreed"]
    path.write_text(path.read_text("utf-8").replace('"Ship it."', '"Ship it now."'), "utf-8")
    return path


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_awaiting, "awaits a person's decision"),
        (_interrupted, "no result yet"),
        (_edited, "hash chain is broken"),
    ],
)
def test_a_file_without_a_decision_or_changed_is_refused_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], Path], reason: str
) -> None:
    path = make(tmp_path)
    before = path.read_bytes()
    assert outcome(path, "held", "It held fine.") == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert reason in err and "Traceback" not in err
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("note", "at", "reason"),
    [
        ("   ", None, "a note in words"),
        ("-- 42 !", None, "a note in words"),
        ("x" * 2001, None, "at most 2,000"),
        ("It held.", "2001-01-01", "is before the decision"),
        ("It held.", "next tuesday", "not an ISO date"),
        ("It held.", "2999-01-01T00:00:00+00:00", "more than a day ahead"),
    ],
    ids=["blank", "no words", "too long", "before the decision", "not a date", "future"],
)
def test_a_bad_outcome_is_refused_untouched(
    session: Path,
    capsys: pytest.CaptureFixture[str],
    note: str,
    at: str | None,
    reason: str,
) -> None:
    before = session.read_bytes()
    code = outcome(session, "held", note, *((at,) if at else ()))
    assert code == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert reason in err and "Traceback" not in err
    assert session.read_bytes() == before


def test_an_outcome_dated_before_the_one_it_follows_is_refused(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert outcome(session, "held", "It held a week.") == 0
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    before = session.read_bytes()
    assert outcome(session, "failed", "It failed after all.", yesterday) == ExitCode.BAD_INPUT
    assert "before the outcome before it" in capsys.readouterr().err
    assert session.read_bytes() == before


def test_an_outcome_needs_one_word_and_a_note(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = session.read_bytes()
    for args, said in (
        (["--held", "--failed", "--note", "Both?"], "not allowed with argument --held"),
        (["--note", "Neither?"], "one of the arguments --held --failed --mixed is required"),
        (["--mixed"], "the following arguments are required: --note"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(["outcome", str(session), *args])
        assert exit_.value.code == ExitCode.BAD_INPUT
        assert said in capsys.readouterr().err
    assert session.read_bytes() == before


# ------------------------------------------------------------ edited outcomes
def _forged(session: Path, tmp_path: Path, signatures: str | None) -> Path:
    """The first outcome's note reworded; with ``signatures``, the chain recomputed too."""
    doc = tomllib.loads(session.read_text("utf-8"))
    doc["outcomes"][0]["note"] = "It held beautifully."
    if signatures is not None:
        rechain(doc, signatures)
    path = tmp_path / f"forged-{signatures}.toml"
    write(path, doc)
    return path


@pytest.fixture
def judged(session: Path) -> Path:
    assert outcome(session, "failed", "It failed in production.") == 0
    return session


def test_an_edited_outcome_breaks_the_chain(
    judged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, checked = report(_forged(judged, tmp_path, None), capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert ("outcome 1", "hash") in {(f["where"], f["field"]) for f in checked["failures"]}


def test_an_edited_outcome_with_the_chain_recomputed_fails_its_signature(
    judged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, checked = report(_forged(judged, tmp_path, "kept"), capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert {(f["where"], f["field"]) for f in checked["failures"]} == {("outcome 1", "signature")}


@pytest.mark.parametrize("signatures", ["stripped", "forger"])
def test_an_edited_outcome_re_signed_or_unsigned_fails_trusted(
    judged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], signatures: str
) -> None:
    path = _forged(judged, tmp_path, signatures)
    code, checked = report(path, capsys)
    assert code == ExitCode.DECIDED, checked["failures"]  # every rule holds: the chain lies well
    code, checked = report(path, capsys, "--trusted")
    assert code == ExitCode.VERIFY_FAILED
    assert {(f["where"], f["field"]) for f in checked["failures"]} == {("file", "signer")}
    if signatures == "forger":
        assert FORGER.fingerprint in checked["failures"][0]["detail"]


@pytest.mark.parametrize(
    ("edit", "field", "detail"),
    [
        ({"outcome": "great"}, "outcome", "not held, failed or mixed"),
        ({"note": ""}, "note", "a note in words"),
        ({"at": "2001-01-01"}, "at", "is before the decision"),
        ({"by": "me"}, "fields", "not an outcome's field"),
    ],
)
def test_a_forged_outcome_value_fails_its_claim(
    judged: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    edit: dict[str, str],
    field: str,
    detail: str,
) -> None:
    """Signed by a forger with the chain recomputed: the values themselves are checked."""
    doc = tomllib.loads(judged.read_text("utf-8"))
    doc["outcomes"][0].update(edit)
    rechain(doc, "forger")
    path = tmp_path / "forged.toml"
    write(path, doc)
    code, checked = report(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    (failure,) = checked["failures"]
    assert (failure["where"], failure["field"]) == ("outcome 1", field)
    assert detail in failure["detail"]


def test_an_outcome_with_its_result_dropped_fails(
    judged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tomllib.loads(judged.read_text("utf-8"))
    del doc["result"]
    rechain(doc, "forger")
    path = tmp_path / "no-result.toml"
    write(path, doc)
    code, checked = report(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert any(
        (f["where"], f["field"]) == ("outcome 1", "result") and "follows no result" in f["detail"]
        for f in checked["failures"]
    )


def test_files_from_before_outcomes_load_and_verify_as_before(
    session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """0.1.0 files (unchained) and 0.2 ones (chained, unsigned): no outcome, every claim holds."""
    doc = tomllib.loads(session.read_text("utf-8"))
    rechain(doc, "stripped")
    unsigned = tmp_path / "unsigned.toml"
    write(unsigned, doc)
    for path in [unsigned, *sorted(FIXTURES.glob("session-0.1.0-*.toml"))]:
        data = load_session(path)
        assert data.outcomes == [], path.name
        assert not data.records[-1].name.startswith("outcome"), path.name
        code, checked = report(path, capsys)
        assert code == ExitCode.DECIDED, (path.name, checked["failures"])
        assert not any(c["where"].startswith("outcome") for c in checked["claims"])


def test_an_old_unsigned_file_takes_a_signed_outcome(
    session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tomllib.loads(session.read_text("utf-8"))
    rechain(doc, "stripped")
    unsigned = tmp_path / "unsigned.toml"
    write(unsigned, doc)
    assert outcome(unsigned, "held", "It held for a year.") == 0
    code, checked = report(unsigned, capsys)
    assert code == ExitCode.DECIDED, checked["failures"]
    (span,) = checked["signature"]["signers"]
    assert (span["first"], span["last"], span["records"]) == ("outcome 1", "outcome 1", 1)


# ------------------------------------------------------------ shown in the exports
def test_the_exports_show_the_outcomes_oldest_first(
    judged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert outcome(judged, "mixed", "Half held; *the* [cache](x) | did not") == 0
    capsys.readouterr()

    def export(fmt: str) -> str:
        assert main(["export", str(judged), "--format", fmt]) == ExitCode.DECIDED
        return capsys.readouterr().out

    doc = json.loads(export("json"))  # validated against its schema by tests/conftest.py
    assert [(o["outcome"], o["note"]) for o in doc["outcomes"]] == [
        ("failed", "It failed in production."),
        ("mixed", "Half held; *the* [cache](x) | did not"),
    ]
    markdown = export("markdown")
    section = markdown.split("## Outcomes")[1].split("## Transcript")[0]
    assert "**failed** — It failed in production." in section
    assert (
        "**mixed** (the latest: it counts) — Half held; \\*the\\* \\[cache\\](x) \\| did not"
        in section
    )
    adr = export("adr")
    confirmation = adr.split("### Confirmation")[1].split("## More Information")[0]
    assert "re-checks this record" in confirmation and "**mixed** (the latest" in confirmation
    assert confirmation.index("**failed**") < confirmation.index("**mixed**")


def test_a_damaged_outcome_is_exported_as_stored_and_marked(
    judged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tomllib.loads(judged.read_text("utf-8"))
    doc["outcomes"][0]["outcome"] = 7
    path = tmp_path / "damaged.toml"
    write(path, doc)
    assert main(["export", str(path), "--format", "json"]) == ExitCode.DECIDED
    exported = json.loads(capsys.readouterr().out)  # still valid under the schema
    assert exported["verification"]["ok"] is False and exported["outcomes"][0]["outcome"] == 7


def test_a_session_without_outcomes_exports_as_before(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(session), "--format", "json"]) == ExitCode.DECIDED
    assert "outcomes" not in json.loads(capsys.readouterr().out)
    assert main(["export", str(session)]) == ExitCode.DECIDED
    assert "## Outcomes" not in capsys.readouterr().out
