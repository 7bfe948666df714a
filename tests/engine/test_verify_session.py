"""``moot verify``: untouched sessions of every protocol hold; tampered ones are named.

Most tampering below re-seals the hash chain afterwards and re-signs it with a key
of its own, as a forger who knows the format would, so what catches it is the
claim check itself, not the chain or the signatures (tests/engine/test_signing.py shows
the signatures catching the same forger).
"""

from __future__ import annotations

import json
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tui.cli import main
from tui.engine.record import chain, signing
from tui.engine.record.fileformat import COMMIT
from tui.exitcodes import ExitCode

EXAMPLES = Path(__file__).resolve().parents[2] / "sessions" / "examples"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROTOCOLS = ["consensus", "exhausted", "adversary", "challenge", "refine", "rubric", "delphi"]
_RECORDS = ("turns", "operator_actions", "result")

Doc = dict[str, Any]
FORGER = signing.Signer(Ed25519PrivateKey.generate())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each scripted example run headless once, as a user would."""
    out = tmp_path_factory.mktemp("recorded")
    paths = {}
    for name in PROTOCOLS:
        path = out / f"{name}.toml"
        code = main(
            ["run", str(EXAMPLES / f"scripted-{name}.toml"), "--headless", "--out", str(path)]
        )
        assert code in (ExitCode.DECIDED, ExitCode.UNRESOLVED)
        paths[name] = path
    return paths


def copy(recorded: dict[str, Path], name: str, tmp_path: Path) -> Path:
    target = tmp_path / f"{name}.toml"
    shutil.copyfile(recorded[name], target)
    return target


def verify(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    """Run ``moot verify --json``; the exit code and the parsed report."""
    code = main(["verify", str(path), "--json"])
    return code, json.loads(capsys.readouterr().out)


def failed(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {(f["where"], f["field"]) for f in report["failures"]}


def rewrite(path: Path, change: Callable[[Doc], None], *, reseal: bool = True) -> None:
    """Change the parsed file, then write it back in the session format, one record a chunk."""
    doc = tomllib.loads(path.read_text("utf-8"))
    change(doc)
    header = {k: v for k, v in doc.items() if k not in _RECORDS}
    if reseal:
        header["session"][signing.SIGNER] = FORGER.public
        previous = ""
        for record in chain.in_order(
            header, doc.get("turns", []), doc.get("operator_actions", []), doc.get("result")
        ):
            body = record.body
            assert isinstance(body, dict)
            if record.name != "header":
                body.pop(signing.SIGNER, None)
            body[chain.HASH] = chain.link(previous, body)
            body[chain.SIGNATURE] = FORGER.sign(body[chain.HASH])
            previous = body[chain.HASH]
    parts = [tomli_w.dumps(header)]
    parts += [tomli_w.dumps({"turns": [t]}) for t in doc.get("turns", [])]
    parts += [tomli_w.dumps({"operator_actions": [a]}) for a in doc.get("operator_actions", [])]
    if "result" in doc:
        parts.append(tomli_w.dumps({"result": doc["result"]}))
    path.write_text("".join(p + COMMIT for p in parts), "utf-8")


@pytest.mark.parametrize("name", PROTOCOLS)
def test_untouched_sessions_of_every_protocol_verify(
    name: str, recorded: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = recorded[name]
    before = path.read_bytes()
    assert main(["verify", str(path)]) == ExitCode.DECIDED
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: verified: all ") and "claims hold" in out
    code, report = verify(path, capsys)
    assert code == ExitCode.DECIDED and report["ok"] is True and report["failures"] == []
    fields = {c["field"] for c in report["claims"]}
    assert {"commit markers", "hash", "schedule", "saw", "content", "decision"} <= fields
    assert path.read_bytes() == before  # verify never writes


def test_a_rewrite_in_the_session_format_keeps_every_claim(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tamper helper itself changes nothing a claim rests on."""
    path = copy(recorded, "refine", tmp_path)
    rewrite(path, lambda doc: None)
    assert verify(path, capsys)[0] == ExitCode.DECIDED


@pytest.mark.parametrize("name", ["exhausted", "refine", "rubric"])
def test_files_written_by_0_1_0_verify_on_their_claims(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "old.toml"
    shutil.copyfile(FIXTURES / f"session-0.1.0-{name}.toml", path)
    before = path.read_bytes()
    code, report = verify(path, capsys)
    assert code == ExitCode.DECIDED, report["failures"]
    hashes = [c for c in report["claims"] if c["field"] == "hash"]
    assert hashes and all("before the chain" in c["detail"] for c in hashes)
    assert path.read_bytes() == before


def _last_vote_turn(doc: Doc) -> dict[str, Any]:
    turn: dict[str, Any] = [t for t in doc["turns"] if t.get("vote")][-1]
    return turn


def test_a_changed_vote_fails_the_recount(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy(recorded, "consensus", tmp_path)

    def change(doc: Doc) -> None:
        turn = _last_vote_turn(doc)
        other = next(v for v in doc["result"]["vote_tally"] if v != turn["vote"])
        turn["vote"] = turn["content"]["vote"] = other

    rewrite(path, change)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED and report["ok"] is False
    assert {("result", "vote_tally"), ("result", "final_votes")} <= failed(report)
    assert not any(f["field"] == "hash" for f in report["failures"])  # re-sealed: claims caught it


def test_a_tally_taken_out_of_a_voting_debate_is_named(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only a panel that votes on nothing leaves the tally out; a debate's cannot lose it."""
    path = copy(recorded, "consensus", tmp_path)

    def change(doc: Doc) -> None:
        del doc["result"]["vote_tally"]

    rewrite(path, change)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    named = [f["detail"] for f in report["failures"] if f["field"] == "vote_tally"]
    assert any(d.startswith("missing, though 3 debaters voted") for d in named), named


def test_a_changed_decision_is_named(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy(recorded, "consensus", tmp_path)

    def change(doc: Doc) -> None:
        votes = doc["result"]["vote_tally"]
        doc["result"]["decision"] = next(v for v in votes if v != doc["result"]["decision"])

    rewrite(path, change)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert ("result", "decision") in failed(report)
    assert main(["verify", str(path)]) == ExitCode.VERIFY_FAILED
    assert "result: decision: recorded" in capsys.readouterr().out


def test_a_changed_evidence_quote_is_named(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy(recorded, "rubric", tmp_path)
    where: list[int] = []

    def change(doc: Doc) -> None:
        for turn in doc["turns"]:
            for answer in turn.get("content", {}).get("rubric", []):
                for item in answer["evidence"]:
                    if item["kind"] == "artifact_quote" and not where:
                        item["quote"] = "every client is logged out at once"
                        where.append(turn["index"])

    rewrite(path, change)
    code, report = verify(path, capsys)
    assert where and code == ExitCode.VERIFY_FAILED
    assert (f"turn {where[0]}", "derived.rubric") in failed(report)


def test_a_deleted_turn_is_named(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The last turn cut out of the file as it is: the result's hash no longer follows.
    path = copy(recorded, "exhausted", tmp_path)
    rewrite(path, lambda doc: doc["turns"].pop(), reseal=False)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert {("result", "hash"), ("result", "turns")} <= failed(report)

    # A turn cut from the middle, as it is: the gap and the next record's hash are named.
    path = copy(recorded, "exhausted", tmp_path)
    rewrite(path, lambda doc: doc["turns"].pop(2), reseal=False)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert {("turn 3", "index"), ("turn 4", "hash")} <= failed(report)
    assert main(["export", str(path)]) == ExitCode.BAD_INPUT  # other commands refuse the gap
    capsys.readouterr()

    # A turn from the middle, the rest renumbered and the chain re-sealed: the schedule shows it.
    path = copy(recorded, "exhausted", tmp_path)

    def drop_third(doc: Doc) -> None:
        del doc["turns"][2]
        for n, turn in enumerate(doc["turns"], 1):
            turn["index"] = n

    rewrite(path, drop_third)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert ("turn 3", "schedule") in failed(report)


def test_an_appended_forged_result_is_named(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy(recorded, "exhausted", tmp_path)
    rewrite(path, lambda doc: doc.pop("result"), reseal=False)
    code, report = verify(path, capsys)  # an interrupted run: nothing claimed yet
    assert code == ExitCode.DECIDED and any("no [result] yet" in n for n in report["notes"])
    unfinished = path.read_text("utf-8")

    forged = {"decision": "adopt", "decision_rule": "threshold_vote", "decided_by": "rule"}
    path.write_text(unfinished + tomli_w.dumps({"result": forged}) + COMMIT, "utf-8")
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert {("result", "hash"), ("result", "decision"), ("result", "decision_rule")} <= failed(
        report
    )

    # Sealed onto the chain by a forger who knows the format: the claims still fail.
    rewrite(path, lambda doc: None)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED and ("result", "hash") not in failed(report)
    assert {("result", "decision"), ("result", "decision_rule")} <= failed(report)


def test_an_edited_hash_is_named(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy(recorded, "challenge", tmp_path)
    text = path.read_text("utf-8")
    doc = tomllib.loads(text)
    old = doc["turns"][1]["hash"]
    path.write_text(text.replace(old, "0" * 64), "utf-8")
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert ("turn 2", "hash") in failed(report)
    # Nothing else changed; the signature of turn 2 signed the hash it had.
    assert failed(report) <= {("turn 2", "hash"), ("turn 2", "signature"), ("turn 3", "hash")}


def test_a_hash_edited_to_any_character_is_named_not_a_crash(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stored hash is file text: a BOM or other non-ASCII character in it breaks the chain."""
    path = copy(recorded, "adversary", tmp_path)
    text = path.read_text("utf-8")
    old = tomllib.loads(text)["turns"][0]["hash"]
    path.write_text(text.replace(old, old[:10] + "\ufeff" + old[10:]), "utf-8")
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert ("turn 1", "hash") in failed(report)
    assert main(["export", str(path), "--format", "json"]) == ExitCode.DECIDED
    assert "hash chain is broken" in capsys.readouterr().err


def test_an_unreadable_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(tmp_path / "missing.toml")]) == ExitCode.BAD_INPUT
    assert main(["verify", str(EXAMPLES / "scripted-refine.toml")]) == ExitCode.BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == "" and "missing.toml" in captured.err


def test_a_broken_chain_warns_on_export_and_stops_resume_unless_forced(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = copy(recorded, "exhausted", tmp_path)
    doc = tomllib.loads(path.read_text("utf-8"))
    said = doc["turns"][3]["content"]["weaknesses"][0]
    path.write_text(path.read_text("utf-8").replace(said, said + " (edited)", 1), "utf-8")
    before = path.read_bytes()

    assert main(["export", str(path), "--format", "json"]) == ExitCode.DECIDED
    assert "hash chain is broken at turn 4" in capsys.readouterr().err

    assert main(["resume", str(path), "--headless"]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "hash chain broken at turn 4" in err and "--force" in err
    assert path.read_bytes() == before  # refused before anything was written

    assert main(["resume", str(path), "--headless", "--force"]) == ExitCode.UNRESOLVED
    capsys.readouterr()
    code, report = verify(path, capsys)  # forcing continues the file, it does not launder it
    assert code == ExitCode.VERIFY_FAILED and ("turn 4", "hash") in failed(report)


def test_a_release_the_gate_refuses_is_named(
    recorded: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The critic asked to release a plan it scored 10: code would not have released it."""
    path = copy(recorded, "adversary", tmp_path)
    releasing: list[int] = []

    def change(doc: Doc) -> None:
        turn = next(
            t for t in doc["turns"] if t.get("derived", {}).get("routing_decision") == "release"
        )
        turn["content"]["score"] = 10
        releasing.append(turn["index"])

    rewrite(path, change)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    where = f"turn {releasing[0]}"
    assert {(where, "release gate"), (where, "derived.routing_decision")} <= failed(report)
    assert ("result", "decision") in failed(report)
    gate = next(f for f in report["failures"] if f["field"] == "release gate")
    assert "score 10 is below release_score 80" in gate["detail"]
