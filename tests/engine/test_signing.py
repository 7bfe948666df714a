"""Signed sessions: a forger who recomputes the hash chain is caught by the signatures.

Each forgery below is an edit that moot's claim checks cannot refuse once the
chain is recomputed (a reworded stance, a forged or deleted operator decision,
an escalation turned into adopt with the result recomputed by moot's own
engine, a scripted session relabelled as a cloud model, ...). Each is tried
three ways: keeping the author's signatures (they no longer hold), stripping
them (the file reads as unsigned), and signing with the forger's own key (a key
the reader does not trust). ``moot verify`` refuses the first outright and the
other two with ``--trusted``. Every test runs with ``MOOT_CONFIG_DIR`` in a tmp
folder, so no real key is read or made.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import shutil
import stat
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tui.cli import main
from tui.engine.core.ports import ProviderError, TokenSink, TurnReply, TurnRequest
from tui.engine.record import chain, signing
from tui.engine.record.fileformat import COMMIT
from tui.engine.record.keys import KEY_FILE, user_signer
from tui.engine.record.session import load_session
from tui.engine.run.runner import Engine
from tui.exitcodes import ExitCode

EXAMPLES = Path(__file__).resolve().parents[2] / "sessions" / "examples"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
_RECORDS = ("turns", "operator_actions", "result", "outcomes")
Doc = dict[str, Any]
FORGER = signing.Signer(Ed25519PrivateKey.generate())


# ------------------------------------------------------------------ sessions
@pytest.fixture(scope="module")
def author(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config folder of the user who wrote the sessions (their key is made there)."""
    return tmp_path_factory.mktemp("author-config")


@pytest.fixture(scope="module")
def written(author: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Sessions written by moot as a user would: agreed, escalated, and decided by the operator."""
    out = tmp_path_factory.mktemp("written")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOOT_CONFIG_DIR", str(author))
        paths = {name: out / f"{name}.toml" for name in ("consensus", "exhausted", "decided")}
        for name in ("consensus", "exhausted"):
            spec = EXAMPLES / f"scripted-{name}.toml"
            code = main(["run", str(spec), "--headless", "--out", str(paths[name])])
            assert code in (ExitCode.DECIDED, ExitCode.UNRESOLVED)
        shutil.copyfile(paths["exhausted"], paths["decided"])
        decide = ["decide", str(paths["decided"]), "--vote", "reject"]
        assert main([*decide, "--rationale", "Keep the repos apart."]) == ExitCode.DECIDED
    return paths


@pytest.fixture
def as_author(author: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Verify as the author: their key is "you"."""
    monkeypatch.setenv("MOOT_CONFIG_DIR", str(author))
    return author


def verify(path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, Doc]:
    code = main(["verify", str(path), "--json", *flags])
    return code, json.loads(capsys.readouterr().out)


def failed(report: Doc) -> set[tuple[str, str]]:
    return {(f["where"], f["field"]) for f in report["failures"]}


# ------------------------------------------------------------- the forger
def write(path: Path, doc: Doc) -> None:
    """The document in the session format, one record a chunk, as moot writes it."""
    header = {k: v for k, v in doc.items() if k not in _RECORDS}
    parts = [tomli_w.dumps(header)]
    parts += [tomli_w.dumps({"turns": [t]}) for t in doc.get("turns", [])]
    parts += [tomli_w.dumps({"operator_actions": [a]}) for a in doc.get("operator_actions", [])]
    if "result" in doc:
        parts.append(tomli_w.dumps({"result": doc["result"]}))
    parts += [tomli_w.dumps({"outcomes": [o]}) for o in doc.get("outcomes", [])]
    path.write_text("".join(p + COMMIT for p in parts), "utf-8")


def rechain(doc: Doc, signatures: str) -> None:
    """Recompute every hash; ``signatures``: "kept" as they were, "stripped", or "forger"'s."""
    header = {k: v for k, v in doc.items() if k not in _RECORDS}
    if signatures != "kept":
        doc["session"].pop(signing.SIGNER, None)
        if signatures == "forger":
            doc["session"][signing.SIGNER] = FORGER.public
    previous = ""
    records = chain.in_order(
        header,
        doc.get("turns", []),
        doc.get("operator_actions", []),
        doc.get("result"),
        doc.get("outcomes", []),
    )
    for record in records:
        body = record.body
        assert isinstance(body, dict)
        if signatures != "kept" and record.name != "header":
            body.pop(signing.SIGNER, None)
        body[chain.HASH] = chain.link(previous, body)
        previous = body[chain.HASH]
        if signatures == "stripped":
            body.pop(chain.SIGNATURE, None)
        elif signatures == "forger":
            body[chain.SIGNATURE] = FORGER.sign(previous)
    doc.update({k: v for k, v in header.items() if k in (chain.HASH, chain.SIGNATURE)})
    if signatures == "stripped":
        doc.pop(chain.SIGNATURE, None)


class _Never:
    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        raise ProviderError("forger", "every turn is recorded")

    async def aclose(self) -> None:
        return None


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value if v is not None]
    return value


def recompute_result(doc: Doc, scratch: Path) -> None:
    """The ``[result]`` moot's own engine gives for the edited turns and actions."""
    doc.pop("result", None)
    draft = copy.deepcopy(doc)
    rechain(draft, "stripped")
    write(scratch, draft)
    data = load_session(scratch)
    never = _Never()
    engine = Engine(
        data.spec,
        lambda debater: never,
        recorded_turns=data.turns,
        recorded_actions=data.actions,
    )
    asyncio.run(engine.run())
    doc["result"] = _plain(dict(engine.result()))


def _turns(doc: Doc, kind: str) -> list[Doc]:
    return [t for t in doc["turns"] if t["kind"] == kind]


def _last_round_votes(doc: Doc, vote: str) -> None:
    last = max(t["round"] for t in doc["turns"])
    for turn in doc["turns"]:
        if turn["round"] == last and turn["phase"] == "consensus":
            turn["vote"] = turn["content"]["vote"] = vote


def _relabel(doc: Doc) -> None:
    for debater in doc["spec"]["debaters"]:
        debater["model"] = "openai/gpt-4o"
        debater.pop("script", None)
    for turn in doc["turns"]:
        turn["model"], turn["family"] = "openai/gpt-4o", "openai"


def _forged_decision(doc: Doc) -> None:
    doc["operator_actions"] = [
        {
            "at": "2026-11-25T15:00:00.000+00:00",
            "action": "decide",
            "after_turn": len(doc["turns"]),
            "vote": "adopt",
            "rationale": "The team agreed offline.",
        }
    ]


def _reworded_rationale(doc: Doc) -> None:
    doc["operator_actions"][0]["rationale"] = doc["result"]["rationale"] = "Adopt it."


# (session, edit, whether the result is recomputed by the engine afterwards)
Edit = Callable[[Doc], None]
FORGERIES: dict[str, tuple[str, Edit, bool]] = {
    "reworded stance": (
        "consensus",
        lambda d: _turns(d, "position")[0]["content"].update(stance="Ship it tonight, no check."),
        False,
    ),
    "reworded rationale": (
        "consensus",
        lambda d: _turns(d, "position")[1]["content"].update(rationale="The data is safe."),
        False,
    ),
    "reworded critique": (
        "consensus",
        lambda d: _turns(d, "critique")[0]["content"]["weaknesses"].__setitem__(
            0, "The rollback check adds ten minutes to the deploy."
        ),
        False,
    ),
    "reworded motion": (
        "consensus",
        lambda d: d["spec"]["debate"].update(motion="Ship the migration with a rollback check."),
        False,
    ),
    "relabelled openai/gpt-4o": ("consensus", _relabel, False),
    "changed spend": (
        "consensus",
        lambda d: d["turns"][0].update(tokens_in=90000, tokens_out=4000, cost=1.25),
        True,
    ),
    "escalate turned into adopt": ("exhausted", lambda d: _last_round_votes(d, "adopt"), True),
    "forged operator decision": ("exhausted", _forged_decision, True),
    "deleted operator decision": ("decided", lambda d: d.pop("operator_actions"), True),
    "changed operator decision": (
        "decided",
        lambda d: d["operator_actions"][0].update(vote="adopt"),
        True,
    ),
    "reworded operator rationale": ("decided", _reworded_rationale, False),
    "backdated session": (
        "decided",
        lambda d: d["session"].update(created="2024-01-01T09:00:00+00:00"),
        False,
    ),
}


# What the forged result says, where the forgery changes the outcome.
FORGED_DECISION = {
    "escalate turned into adopt": ("adopt", "threshold_vote"),
    "forged operator decision": ("adopt", "operator_decision"),
    "deleted operator decision": ("escalate", "max_rounds_exhausted"),
    "changed operator decision": ("adopt", "operator_decision"),
}


def forge(source: Path, name: str, signatures: str, tmp_path: Path) -> Path:
    session, edit, recompute = FORGERIES[name]
    doc = tomllib.loads(source.read_text("utf-8"))
    edit(doc)
    if recompute:
        recompute_result(doc, tmp_path / "scratch.toml")
    rechain(doc, signatures)
    path = tmp_path / f"{session}-forged.toml"
    write(path, doc)
    return path


# ------------------------------------------------------------------ the tests
@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_forgery_with_the_chain_recomputed_passes_every_claim_but_the_signer(
    name: str,
    written: dict[str, Path],
    as_author: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The forger's best: chain recomputed, signed with their own key. Only trust refuses it."""
    path = forge(written[FORGERIES[name][0]], name, "forger", tmp_path)
    if name in FORGED_DECISION:  # the outcome itself was forged
        result = tomllib.loads(path.read_text("utf-8"))["result"]
        assert (result["decision"], result["decision_rule"]) == FORGED_DECISION[name]
    code, report = verify(path, capsys)
    assert code == ExitCode.DECIDED, report["failures"]  # every rule holds: the chain lies well
    assert [s["fingerprint"] for s in report["signature"]["signers"]] == [FORGER.fingerprint]
    assert report["signature"]["signers"][0]["trusted"] is False
    code, report = verify(path, capsys, "--trusted")
    assert code == ExitCode.VERIFY_FAILED
    assert failed(report) == {("file", "signer")}
    assert "not a key you trust" in report["failures"][0]["detail"]


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_forgery_keeping_the_authors_signatures_is_refused(
    name: str,
    written: dict[str, Path],
    as_author: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = forge(written[FORGERIES[name][0]], name, "kept", tmp_path)
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert failed(report)  # something fails, and every failure is a signature
    assert {field for _, field in failed(report)} == {"signature"}
    assert not any(f["field"] == "hash" for f in report["failures"])  # the chain holds


@pytest.mark.parametrize("name", list(FORGERIES))
def test_a_forgery_with_the_signatures_stripped_reads_as_unsigned_and_is_refused(
    name: str,
    written: dict[str, Path],
    as_author: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = forge(written[FORGERIES[name][0]], name, "stripped", tmp_path)
    code, report = verify(path, capsys)
    assert code == ExitCode.DECIDED
    assert report["signature"]["signed"] is False
    code, report = verify(path, capsys, "--trusted")
    assert code == ExitCode.VERIFY_FAILED
    assert failed(report) == {("file", "signer")}
    assert main(["verify", str(path)]) == ExitCode.DECIDED
    assert "unsigned: nothing shows who wrote it" in capsys.readouterr().out


@pytest.mark.parametrize("session", ["consensus", "exhausted", "decided"])
def test_untouched_sessions_are_signed_by_you_and_pass_trusted(
    session: str, written: dict[str, Path], as_author: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, report = verify(written[session], capsys, "--trusted")
    assert code == ExitCode.DECIDED, report["failures"]
    (signer,) = report["signature"]["signers"]
    assert signer["fingerprint"] == user_signer().fingerprint
    assert signer["name"] == "you" and signer["trusted"] is True
    assert signer["first"] == "header" and signer["last"] == "result"
    assert main(["verify", str(written[session])]) == ExitCode.DECIDED
    assert "(your key)" in capsys.readouterr().out


def test_a_stranger_sees_an_untrusted_signer_until_they_trust_the_key(
    written: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], author: Path
) -> None:
    """Another user (their own config folder) verifies the author's file, then trusts them."""
    path = written["consensus"]
    code, report = verify(path, capsys, "--trusted")
    assert code == ExitCode.VERIFY_FAILED and failed(report) == {("file", "signer")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOOT_CONFIG_DIR", str(author))
        assert main(["keys", "show"]) == ExitCode.DECIDED
    shown = capsys.readouterr()
    assert "PRIVATE" not in shown.out + shown.err
    (tmp_path / "alice.pub").write_text(shown.out, "utf-8")
    assert main(["keys", "trust", str(tmp_path / "alice.pub"), "--name", "alice"]) == 0
    capsys.readouterr()
    code, report = verify(path, capsys, "--trusted")
    assert code == ExitCode.DECIDED
    assert report["signature"]["signers"][0]["name"] == "alice"
    fingerprint = report["signature"]["signers"][0]["fingerprint"]
    assert main(["keys", "list"]) == 0
    assert f"{fingerprint}  alice" in capsys.readouterr().out
    assert main(["keys", "untrust", "alice"]) == 0
    capsys.readouterr()
    assert verify(path, capsys, "--trusted")[0] == ExitCode.VERIFY_FAILED


def test_trusting_a_file_that_is_not_one_public_key_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.pub"
    bad.write_text("ssh-rsa AAAAB3NzaC1yc2E nobody\n", "utf-8")
    assert main(["keys", "trust", str(bad)]) == ExitCode.BAD_INPUT
    assert "ssh-ed25519" in capsys.readouterr().err
    assert main(["keys", "trust", str(tmp_path / "missing.pub")]) == ExitCode.BAD_INPUT
    assert not (Path(os.environ["MOOT_CONFIG_DIR"]) / "trusted-keys").exists()


def test_files_from_before_signing_load_and_verify_as_unsigned(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for fixture in sorted(FIXTURES.glob("session-0.1.0-*.toml")):
        code, report = verify(fixture, capsys)
        assert code == ExitCode.DECIDED, (fixture.name, report["failures"])
        assert report["signature"]["signed"] is False
        assert verify(fixture, capsys, "--trusted")[0] == ExitCode.VERIFY_FAILED


def test_a_chained_unsigned_file_resumed_is_signed_from_there_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 0.2 file (chained, unsigned) stopped early, resumed now: the new records are signed,
    and vouch only for themselves: the old ones count as yours once adopted (`moot adopt`)."""
    full = tmp_path / "full.toml"
    code = main(
        ["run", str(EXAMPLES / "scripted-consensus.toml"), "--headless", "--out", str(full)]
    )
    assert code == ExitCode.DECIDED
    capsys.readouterr()
    doc = tomllib.loads(full.read_text("utf-8"))
    doc["turns"] = doc["turns"][:5]
    del doc["result"]
    rechain(doc, "stripped")
    old = tmp_path / "old.toml"
    write(old, doc)
    code, report = verify(old, capsys)
    assert code == ExitCode.DECIDED and report["signature"]["signed"] is False
    assert main(["resume", str(old), "--headless"]) == ExitCode.DECIDED
    capsys.readouterr()
    code, report = verify(old, capsys, "--trusted")
    assert code == ExitCode.VERIFY_FAILED
    assert "6 unsigned" in report["failures"][0]["detail"]
    assert main(["adopt", str(old), "--yes"]) == ExitCode.DECIDED
    capsys.readouterr()
    code, report = verify(old, capsys, "--trusted")
    assert code == ExitCode.DECIDED, report["failures"]
    signature = report["signature"]
    assert signature["unsigned_records"] == 6  # the header and turns 1 to 5
    assert signature["signers"][0]["first"] == "turn 6"
    assert tomllib.loads(old.read_text("utf-8"))["turns"][5][signing.SIGNER] == (
        user_signer().public
    )


def test_a_session_resumed_by_someone_else_names_both_signers(
    written: dict[str, Path], author: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "handed-over.toml"
    doc = tomllib.loads(written["consensus"].read_text("utf-8"))
    doc["turns"] = doc["turns"][:7]
    del doc["result"]  # stopped after turn 7 (a whole record cut, as a kill leaves it)
    write(path, doc)
    assert main(["resume", str(path), "--headless"]) == ExitCode.DECIDED
    capsys.readouterr()
    code, report = verify(path, capsys)
    assert code == ExitCode.DECIDED, report["failures"]
    signers = report["signature"]["signers"]
    assert [(s["first"], s["last"]) for s in signers] == [
        ("header", "turn 7"),
        ("turn 8", "result"),
    ]
    assert [s["name"] for s in signers] == [None, "you"]
    assert verify(path, capsys, "--trusted")[0] == ExitCode.VERIFY_FAILED


def test_resume_refuses_a_file_whose_signature_does_not_hold(
    written: dict[str, Path], tmp_path: Path, as_author: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tomllib.loads(written["consensus"].read_text("utf-8"))
    doc["turns"] = doc["turns"][:7]
    del doc["result"]
    doc["turns"][2]["content"]["stance"] = "Ship it."
    rechain(doc, "kept")
    path = tmp_path / "forged.toml"
    write(path, doc)
    before = path.read_bytes()
    assert main(["resume", str(path), "--headless"]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "signature does not hold at turn 3" in err and "--force" in err
    assert path.read_bytes() == before


def test_the_key_is_made_once_private_and_never_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = Path(os.environ["MOOT_CONFIG_DIR"])
    assert not config.exists()
    out = tmp_path / "s.toml"
    code = main(["run", str(EXAMPLES / "scripted-consensus.toml"), "--headless", "--out", str(out)])
    assert code == ExitCode.DECIDED
    key = config / KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    pem = key.read_text("ascii")
    printed = capsys.readouterr()
    body = "".join(pem.splitlines()[1:-1])
    assert body not in printed.out + printed.err + out.read_text("utf-8")
    first = user_signer().public
    again = ["run", str(EXAMPLES / "scripted-adversary.toml"), "--headless", "--out"]
    assert main([*again, str(tmp_path / "t.toml")]) == ExitCode.DECIDED
    assert key.read_text("ascii") == pem  # the same key, not a new one
    assert tomllib.loads(out.read_text("utf-8"))["session"][signing.SIGNER] == first


def test_a_key_others_can_read_is_refused_before_any_file_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user_signer()
    key = Path(os.environ["MOOT_CONFIG_DIR"]) / KEY_FILE
    key.chmod(0o644)
    out = tmp_path / "s.toml"
    code = main(["run", str(EXAMPLES / "scripted-consensus.toml"), "--headless", "--out", str(out)])
    assert code == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "chmod 600" in err
    assert err.startswith(f"moot: {key}: ")  # the file at fault, not the session never made
    assert str(out) not in err
    assert not out.exists()


def test_a_config_folder_moot_cannot_write_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder", "utf-8")
    monkeypatch.setenv("MOOT_CONFIG_DIR", str(blocked / "moot"))
    out = tmp_path / "s.toml"
    code = main(["run", str(EXAMPLES / "scripted-consensus.toml"), "--headless", "--out", str(out)])
    assert code == ExitCode.BAD_INPUT
    assert "cannot create your signing key" in capsys.readouterr().err
    assert not out.exists()


def test_the_adr_states_the_signer(
    written: dict[str, Path], as_author: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(written["decided"]), "--format", "adr"]) == ExitCode.DECIDED
    adr = capsys.readouterr().out
    fingerprint = user_signer().fingerprint
    assert f"- Signed by: `{fingerprint}`" in adr
    forged = forge(written["decided"], "changed operator decision", "kept", tmp_path)
    assert main(["export", str(forged), "--format", "adr"]) == ExitCode.DECIDED
    assert "signatures do not hold" in capsys.readouterr().out
    stripped = forge(written["decided"], "reworded operator rationale", "stripped", tmp_path)
    assert main(["export", str(stripped), "--format", "adr"]) == ExitCode.DECIDED
    assert "- Signed by: nobody (unsigned)" in capsys.readouterr().out


def test_a_key_problem_reaches_every_front_end_as_a_session_error(tmp_path: Path) -> None:
    """The console and batch show a SessionError without a traceback; key problems are one."""
    from tui.engine.basics.errors import SessionError
    from tui.engine.record.session import SessionStore

    user_signer()
    (Path(os.environ["MOOT_CONFIG_DIR"]) / KEY_FILE).chmod(0o640)
    raw = tomllib.loads((EXAMPLES / "scripted-consensus.toml").read_text("utf-8"))
    with pytest.raises(SessionError, match="chmod 600"):
        SessionStore.create(tmp_path / "s.toml", raw)
    assert not (tmp_path / "s.toml").exists()


def test_fork_refuses_a_file_whose_signature_does_not_hold(
    written: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fork is signed by whoever forks: it must not launder a forgery under their key."""
    forged = forge(written["consensus"], "reworded stance", "kept", tmp_path)
    out = tmp_path / "fork.toml"
    assert main(["fork", str(forged), "--at", "3", "--out", str(out)]) == ExitCode.BAD_INPUT
    assert "signature does not hold at turn 1" in capsys.readouterr().err
    assert not out.exists()
    assert main(["fork", str(written["consensus"]), "--at", "3", "--out", str(out)]) == 0
    capsys.readouterr()
    code, report = verify(out, capsys, "--trusted")  # the forker signs the copy
    assert code == ExitCode.DECIDED, report["failures"]


def test_watch_shows_records_without_their_signatures(written: dict[str, Path]) -> None:
    from tui.commands.watch import Seen, follow

    seen: list[Seen] = []
    result = follow(written["decided"], seen.append, interval=0.01)
    shown = [s.body for s in seen if s.kind in ("action", "result")]
    assert shown and result == shown[-1]
    for body in shown:
        assert not {chain.HASH, chain.SIGNATURE, signing.SIGNER} & set(body)


def test_loading_checks_each_spans_last_signature_and_verify_checks_every_one(
    written: dict[str, Path], tmp_path: Path, as_author: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Loading a long session costs one Ed25519 check per key, not per record (issue 24)."""
    doc = tomllib.loads(written["consensus"].read_text("utf-8"))
    turns = doc["turns"]
    turns[1][chain.SIGNATURE] = turns[2][chain.SIGNATURE]  # well formed, chain intact, wrong
    path = tmp_path / "swapped.toml"
    write(path, doc)
    checked: list[str] = []
    real = signing.holds

    def counting(public: str, chain_hash: str, signature: object) -> bool:
        checked.append(chain_hash)
        return real(public, chain_hash, signature)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(signing, "holds", counting)
        data = load_session(path)
    assert not data.chain and not data.signatures.every
    assert checked == [data.records[-1].body[chain.HASH]]  # the one that vouches for the rest
    assert not data.warnings  # what the file claims of who wrote it holds
    code, report = verify(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    assert failed(report) == {("turn 2", "signature")}
    assert main(["export", str(path), "--format", "adr"]) == ExitCode.DECIDED
    assert "but 1 signature does not hold" in capsys.readouterr().out  # the ADR checks each too


def test_a_bad_last_signature_on_load_names_the_first_record_it_fails_at(
    written: dict[str, Path], tmp_path: Path, as_author: Path
) -> None:
    doc = tomllib.loads(written["consensus"].read_text("utf-8"))
    doc["turns"][2]["content"]["stance"] = "Ship it."
    rechain(doc, "kept")  # every signature after turn 2 now signs a hash it never saw
    path = tmp_path / "forged.toml"
    write(path, doc)
    data = load_session(path)
    assert data.signatures.every
    assert data.signatures.problems[0][0] == "turn 3"
    assert "signature does not hold at turn 3" in data.warnings[-1]


def test_a_key_made_again_is_said_once_and_verify_names_the_earlier_key_as_yours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lost key file is made again; sessions the old key signed then fail --trusted, and
    the person is told why instead of seeing a stranger's signature."""
    spec = str(EXAMPLES / "scripted-consensus.toml")
    first, second, third = (tmp_path / f"{n}.toml" for n in ("first", "second", "third"))
    assert main(["run", spec, "--headless", "--out", str(first)]) == ExitCode.DECIDED
    assert "signing key" not in capsys.readouterr().err  # a first key is no news
    old = user_signer().fingerprint
    (Path(os.environ["MOOT_CONFIG_DIR"]) / KEY_FILE).unlink()
    assert main(["run", spec, "--headless", "--out", str(second)]) == ExitCode.DECIDED
    remade = capsys.readouterr().err
    new = user_signer().fingerprint
    assert new != old and f"made a new signing key {new}" in remade
    assert f"your earlier key {old}" in remade and "--trusted" in remade
    assert main(["run", spec, "--headless", "--out", str(third)]) == ExitCode.DECIDED
    assert "signing key" not in capsys.readouterr().err  # said once, when it was made
    assert main(["verify", str(first), "--trusted"]) == ExitCode.VERIFY_FAILED
    said = capsys.readouterr()
    assert f"{old} was your signing key" in said.err
    assert user_signer().public not in said.err and old in said.out
