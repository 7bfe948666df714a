"""A stranger's file starts no program, and a signature vouches only for what its signer wrote.

The evil session is what anyone with moot's code can make: unsigned, its hash
chain valid, naming ``[[spec.tools]] mcp = [python, -c, <write a marker>]`` and an
absolute ``spec_folder``. Whatever the victim runs on it (resume, decide, decide
--extend, fork, then resume of the fork, verify --trusted), the marker never
appears and no command vouches for records the victim did not write. The
property test states the rules plainly and checks :mod:`tui.engine.record.trust`
against them over generated record sequences.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.test_signing import EXAMPLES, rechain, write
from tui.cli import main
from tui.engine.record import chain, signing
from tui.engine.record.keys import user_signer
from tui.engine.record.session import SessionData, load_session
from tui.engine.record.trust import (
    adopt_fields,
    not_known_yours,
    session_tools_refusal,
    unvouched,
)
from tui.exitcodes import ExitCode


def evil(tmp_path: Path, example: str, marker: Path, *, turns: int | None = None) -> Path:
    """A session made by a stranger from a real run: unsigned, chain valid, naming a program."""
    made = tmp_path / f"made-{example}.toml"
    code = main(
        ["run", str(EXAMPLES / f"scripted-{example}.toml"), "--headless", "--out", str(made)]
    )
    assert code in (ExitCode.DECIDED, ExitCode.UNRESOLVED)
    doc = tomllib.loads(made.read_text("utf-8"))
    made.unlink()
    ids = [d["id"] for d in doc["spec"]["debaters"]]
    program = f"open({str(marker)!r}, 'w').write('ran')"
    doc["spec"]["tools"] = [{"name": "x", "mcp": [sys.executable, "-c", program], "roles": ids}]
    doc["session"]["spec_folder"] = str(tmp_path)
    if turns is not None:
        doc["turns"] = doc["turns"][:turns]
        doc.pop("result", None)
        doc["operator_actions"] = [
            a for a in doc.get("operator_actions", []) if a["after_turn"] <= turns
        ]
    rechain(doc, "stripped")
    path = tmp_path / "evil.toml"
    write(path, doc)
    return path


def verify_json(path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, Any]:
    capsys.readouterr()  # what came before
    code = main(["verify", str(path), "--json", *flags])
    return code, json.loads(capsys.readouterr().out)


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "the-program-ran"


def test_resume_of_a_strangers_unsigned_session_refuses_naming_the_command(
    tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = evil(tmp_path, "consensus", marker, turns=5)
    before = path.read_bytes()
    capsys.readouterr()
    assert main(["resume", str(path), "--headless"]) == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert "header is unsigned" in err and "-c" in err and "--allow-tools" in err
    assert not marker.exists() and path.read_bytes() == before


def test_deciding_a_strangers_file_signs_only_the_decision(
    tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The victim's decision is signed by them; the stranger's records stay the stranger's."""
    path = evil(tmp_path, "exhausted", marker)
    capsys.readouterr()
    code = main(
        ["decide", str(path), "--vote", "escalate", "--rationale", "Defer this one to a person."]
    )
    assert code == ExitCode.UNRESOLVED
    code, report = verify_json(path, capsys)
    assert code == ExitCode.DECIDED, report["failures"]  # every rule holds
    assert report["signature"]["signers"][0]["fingerprint"] == user_signer().fingerprint
    code, report = verify_json(path, capsys, "--trusted")
    assert code == ExitCode.VERIFY_FAILED
    [failure] = report["failures"]
    assert (failure["where"], failure["field"]) == ("file", "signer")
    assert "header" in failure["detail"] and "no key you trust vouches for" in failure["detail"]
    assert not marker.exists()


def test_decide_extend_on_a_strangers_file_starts_nothing(
    tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = evil(tmp_path, "exhausted", marker)
    code = main(
        ["decide", str(path), "--vote", "escalate", "--rationale", "Defer this one to a person."]
    )
    assert code == ExitCode.UNRESOLVED
    before = path.read_bytes()
    capsys.readouterr()
    assert main(["decide", str(path), "--extend"]) == ExitCode.BAD_INPUT
    out = capsys.readouterr()
    assert "Traceback" not in out.err and "ExceptionGroup" not in out.err
    assert "header is unsigned" in out.err and "--allow-tools" in out.err
    assert not marker.exists() and path.read_bytes() == before


def test_fork_of_a_strangers_file_after_a_decision_keeps_no_tool(
    tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """decide --vote adopt, then fork --at 5: the fork (signed by you) would start the program."""
    path = evil(tmp_path, "exhausted", marker)
    assert (
        main(["decide", str(path), "--vote", "adopt", "--rationale", "Adopt it, the team agrees."])
        == 0
    )
    capsys.readouterr()
    fork = tmp_path / "fork.toml"
    assert main(["fork", str(path), "--at", "5", "--out", str(fork)]) == ExitCode.BAD_INPUT
    assert "--allow-tools" in capsys.readouterr().err
    assert not fork.exists() and not marker.exists()


def test_with_allow_tools_the_person_says_so_and_the_program_starts(
    tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flag is the person's consent: the same file then starts its command (it is no MCP
    server, so the run refuses it as a tool that cannot start, after it ran)."""
    path = evil(tmp_path, "consensus", marker, turns=5)
    capsys.readouterr()
    main(["resume", str(path), "--headless", "--allow-tools"])
    assert marker.read_text() == "ran"


def test_a_specs_mcp_command_starts_only_with_allow_tools(
    tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "spec.toml"
    text = (EXAMPLES / "scripted-consensus.toml").read_text("utf-8")
    program = f"open({str(marker)!r}, 'w').write('ran')"
    ids = [d["id"] for d in tomllib.loads(text)["debaters"]]
    tool = {"name": "x", "mcp": [sys.executable, "-c", program], "roles": ids}
    spec.write_text(
        text + "\n[[tools]]\n" + "\n".join(f"{k} = {json.dumps(v)}" for k, v in tool.items()) + "\n"
    )
    out = tmp_path / "s.toml"
    for command in (
        ["run", str(spec), "--headless", "--out", str(out)],
        ["batch", str(spec), "--no-preflight", "--sessions-dir", str(tmp_path / "b")],
    ):
        code = main(command)
        err = capsys.readouterr()
        assert code == ExitCode.BAD_INPUT, err
        assert "--allow-tools" in err.out + err.err and "x runs" in err.out + err.err
    assert not marker.exists() and not out.exists()


def test_verify_trusted_and_tools_hold_only_after_adopting_your_own_old_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 0.2 file of your own, resumed: signed from there on, trusted only once adopted."""
    full = tmp_path / "full.toml"
    assert (
        main(["run", str(EXAMPLES / "scripted-consensus.toml"), "--headless", "--out", str(full)])
        == 0
    )
    doc = tomllib.loads(full.read_text("utf-8"))
    doc["turns"] = doc["turns"][:5]
    del doc["result"]
    rechain(doc, "stripped")
    old = tmp_path / "old.toml"
    write(old, doc)
    assert main(["resume", str(old), "--headless"]) == ExitCode.DECIDED
    capsys.readouterr()
    code, report = verify_json(old, capsys, "--trusted")
    assert code == ExitCode.VERIFY_FAILED
    assert (
        report["signature"]["unsigned_records"] == 6 and report["signature"]["adopted_by"] is None
    )
    assert main(["adopt", str(old), "--yes"]) == ExitCode.DECIDED
    shown = capsys.readouterr().out
    assert "6 records written unsigned (header to turn 5)" in shown
    assert "adopted: 6 records" in shown
    code, report = verify_json(old, capsys, "--trusted")
    assert code == ExitCode.DECIDED, report["failures"]
    assert report["signature"]["adopted_by"] == user_signer().fingerprint
    assert not unvouched(load_session(old), {user_signer().fingerprint})
    # adopting twice, or a file with nothing unsigned, is refused and writes nothing
    before = old.read_bytes()
    assert main(["adopt", str(old), "--yes"]) == ExitCode.BAD_INPUT
    assert main(["adopt", str(full), "--yes"]) == ExitCode.BAD_INPUT
    assert old.read_bytes() == before


def test_adopt_asks_and_a_no_or_no_terminal_changes_nothing(
    tmp_path: Path,
    marker: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = evil(tmp_path, "consensus", marker, turns=5)
    before = path.read_bytes()
    capsys.readouterr()
    assert main(["adopt", str(path)]) == ExitCode.BAD_INPUT  # stdin is no terminal under pytest
    assert "--yes" in capsys.readouterr().err
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda _: "n")
    assert main(["adopt", str(path)]) == ExitCode.UNRESOLVED
    out = capsys.readouterr().out
    assert "x runs" in out and "it would start when you resume" in out  # shown before asked
    assert path.read_bytes() == before


def test_an_adopt_naming_records_that_were_changed_since_fails_verify(
    tmp_path: Path, marker: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = evil(tmp_path, "consensus", marker, turns=5)
    assert main(["adopt", str(path), "--yes"]) == ExitCode.DECIDED
    doc = tomllib.loads(path.read_text("utf-8"))
    doc["operator_actions"][-1]["records"] = 3  # re-signed by a forger? it is your record:
    doc["operator_actions"][-1]["through"] = "0" * 64  # recomputing the chain breaks your signature
    rechain(doc, "kept")
    write(path, doc)
    capsys.readouterr()
    code, report = verify_json(path, capsys)
    assert code == ExitCode.VERIFY_FAILED
    fields = {(f["where"].split(" (")[0], f["field"]) for f in report["failures"]}
    assert ("operator action 1", "adopt") in fields


# ------------------------------------------------------------- the property
YOU, FRIEND, STRANGER = (signing.Signer(Ed25519PrivateKey.generate()) for _ in range(3))
KEYS = {"you": YOU, "friend": FRIEND, "stranger": STRANGER}
TRUSTED = {YOU.fingerprint, FRIEND.fingerprint}

# A plan: how many records come unsigned first, then spans of (signer, records); an
# adopt action may sit at the start of a span, honest or naming a wrong count.
plans = st.tuples(
    st.integers(0, 4),
    st.lists(
        st.tuples(
            st.sampled_from(list(KEYS)),
            st.integers(1, 3),
            st.sampled_from(["none", "honest", "wrong"]),
        ),
        max_size=4,
    ),
)


def _build(
    plan: tuple[int, list[tuple[str, int, str]]],
) -> tuple[list[chain.Record], list[str | None]]:
    """Records as moot writes them, and who wrote each (None: unsigned) by the plan."""
    unsigned, spans = plan
    records: list[chain.Record] = []
    authors: list[str | None] = []
    previous, current = "", None

    def add(kind: str, body: dict[str, Any], who: str | None) -> None:
        nonlocal previous, current
        if who is not None and who != current:
            key = KEYS[who].public
            if kind == "header":
                body = {**body, "session": {signing.SIGNER: key}}
            else:
                body = {**body, signing.SIGNER: key}
            current = who
        sealed = chain.sealed(previous, body)
        previous = sealed[chain.HASH]
        if who is not None:
            sealed[chain.SIGNATURE] = KEYS[who].sign(previous)
        name = "header" if kind == "header" else f"{kind} {len(records)}"
        records.append(chain.Record(name, sealed))
        authors.append(who)

    order = [None] * unsigned + [who for who, n, _ in spans for _ in range(n)]
    adopts = {
        sum(n for _, n, _ in spans[:i]) + unsigned: how for i, (_, _, how) in enumerate(spans)
    }
    for i, who in enumerate(order or [None]):
        how = adopts.get(i, "none")
        if how != "none" and who is not None and i:
            fields = adopt_fields(records, unsigned)
            if how == "wrong":
                fields["records"] = unsigned + 1
            add("operator action", {"action": "adopt", "after_turn": 0, **fields}, who)
        add("header" if not records else "turn", {"index": len(records)}, who)
    return records, authors


def _plainly(records: list[chain.Record], authors: list[str | None]) -> list[str | None]:
    """Who vouches for each record, said plainly: its signer; an unsigned record, the signer
    of the first adopt action naming the unsigned records as they are; else nobody."""
    unsigned = sum(1 for a in authors if a is None)
    adopter = next(
        (
            who
            for r, who in zip(records, authors, strict=True)
            if r.body.get("action") == "adopt"
            and who is not None
            and unsigned
            and r.body.get("records") == unsigned
            and r.body.get("through") == chain.tail(records[:unsigned])
        ),
        None,
    )
    return [
        KEYS[a].fingerprint if a else (KEYS[adopter].fingerprint if adopter else None)
        for a in authors
    ]


@settings(max_examples=300, deadline=None)
@given(plans, st.booleans())
def test_the_signature_and_tools_rules_match_their_plain_statement(
    plan: tuple[int, list[tuple[str, int, str]]], allow_tools: bool
) -> None:
    records, authors = _build(plan)
    checked = signing.check(records)
    assert not checked.problems
    data = cast(
        SessionData,
        SimpleNamespace(
            records=records,
            signatures=checked,
            chain=[],
            meta={"spec_folder": "/somewhere"},
            spec=SimpleNamespace(tools=[SimpleNamespace(name="x", mcp=["prog"], root=None)]),
            path=Path("s.toml"),
        ),
    )
    vouched = _plainly(records, authors)
    # verify --trusted: every record vouched for by a trusted key
    expect_trusted = all(v in TRUSTED for v in vouched)
    assert (not unvouched(data, TRUSTED)) == expect_trusted
    # tools: the header (the record naming them) vouched for by a trusted key, or the flag
    header_ok = vouched[0] in TRUSTED
    assert (not_known_yours(data, TRUSTED) is None) == header_ok
    refused = session_tools_refusal(data, allow_tools=allow_tools, trusted=TRUSTED)
    assert (refused is None) == (allow_tools or header_ok)
