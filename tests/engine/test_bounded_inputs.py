"""Hostile specs, sessions and model replies: refused by name before any parser sees
them, never a crash. How fast is for bench/, not here."""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path
from typing import Any

import pytest
import tomli
from rich.console import Console

from tests.helpers import SCRIPTED, debate_raw
from tui.cli import main
from tui.engine import validate_spec
from tui.engine.core.parsing import TurnParseError, extract_json_object, parse_turn
from tui.engine.core.ports import TurnReply, TurnRequest
from tui.engine.core.records import Position
from tui.engine.record.fileformat import COMMIT
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session

OK_SPEC = """[debate]
title = "T"
motion = "M"
consensus_threshold = 2
[[debaters]]
id = "a"
model = "scripted"
[[debaters]]
id = "b"
model = "scripted"
"""

HOSTILE_TOML = {
    "integer of 5,000 digits": ("x = " + "7" * 5000, "number longer than 100 digits"),
    "arrays 500 deep": ("x = " + "[" * 500 + "]" * 500, "nested more than 32 deep"),
    "inline tables 500 deep": ("x = " + "{a = " * 500 + "1" + "}" * 500, "nested more than 32"),
    "dotted key 1,000 deep": ("x" + ".x" * 1000 + " = 1", "more than 32 parts"),
    "dotted key 30,000 deep": ("x" + ".x" * 30_000 + " = 1", "more than 32 parts"),
    "dotted key 100,000 deep": ("x" + ' . "x"' * 100_000 + " = 1", "more than 32 parts"),
    "table name 1,000 deep": ("[x" + ".x" * 1000 + "]", "more than 32 parts"),
}


def _run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text handed to the TOML parser: a refused input must never get there."""
    seen: list[str] = []
    real = tomli.loads

    def spy(text: str, **kwargs: Any) -> dict[str, Any]:
        seen.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(tomli, "loads", spy)
    return seen


def test_the_spy_sees_what_moot_parses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], parsed: list[str]
) -> None:
    """The tests below would pass by mistake if moot parsed with another function."""
    spec = tmp_path / "spec.toml"
    spec.write_text(OK_SPEC)
    code, err = _run_cli(capsys, "validate", str(spec))
    assert code == 0, err
    assert OK_SPEC in parsed


@pytest.mark.parametrize("case", sorted(HOSTILE_TOML))
def test_hostile_spec_refused_before_parsing_naming_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, parsed: list[str]
) -> None:
    line, limit = HOSTILE_TOML[case]
    spec = tmp_path / "spec.toml"
    spec.write_text(OK_SPEC.replace('motion = "M"\n', f'motion = "M"\n{line}\n'))
    code, err = _run_cli(capsys, "validate", str(spec))
    assert code == 2 and limit in err and "(limit)" in err, err
    assert "Traceback" not in err
    assert not any(line in text for text in parsed), "the parser was handed the hostile text"


@pytest.mark.parametrize("case", sorted(HOSTILE_TOML))
def test_hostile_session_refused_before_parsing_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, parsed: list[str]
) -> None:
    line, limit = HOSTILE_TOML[case]
    out = tmp_path / "s.toml"
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, consensus_threshold=2)
    LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=out).close()
    out.write_text(out.read_text() + f"[extra]\n{line}\n{COMMIT}")
    before = out.read_bytes()
    for argv in (["export", str(out)], ["resume", str(out), "--headless"]):
        code, err = _run_cli(capsys, *argv)
        assert code == 2 and limit in err, err
        assert not any(line in text for text in parsed), argv
    assert out.read_bytes() == before


@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "folder"])
def test_only_regular_files_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    path = tmp_path / target
    if target == "fifo":
        os.mkfifo(path)
    elif target == "folder":
        path.mkdir()
    else:
        path = Path(target)
    for argv in (
        ["validate", str(path)],
        ["run", str(path), "--headless", "--sessions-dir", str(tmp_path / "out")],
        ["export", str(path)],
        ["resume", str(path), "--headless"],
    ):
        code, err = _run_cli(capsys, *argv)  # a FIFO would block an ordinary open
        assert code == 2 and "not a regular file" in err, (argv, err)


def test_oversized_spec_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "big.toml"
    spec.write_text(OK_SPEC + "# " + "x" * 1_000_000 + "\n")
    code, err = _run_cli(capsys, "validate", str(spec))
    assert code == 2 and "larger than the size limit of 1,000,000 bytes" in err


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("protocol = []", "debate.protocol"),
        ("protocol = { a = 1 }", "debate.protocol"),
        ("votes = [[1], { a = 2 }]", "debate.votes"),
        ("phases = { a = 1 }", "debate.phases"),
    ],
)
def test_lists_and_tables_where_strings_belong(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, key: str
) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(OK_SPEC.replace('motion = "M"\n', f'motion = "M"\n{line}\n'))
    code, err = _run_cli(capsys, "validate", str(spec))
    assert code == 2 and key in err and "internal error" not in err, err


@pytest.mark.parametrize(
    ("script", "key"),
    [
        ("script = { votes = 1 }", "debaters[0].script.votes"),
        ('script = { votes = { a = "release" } }', "debaters[0].script.votes"),
        ("script = [1, 2]", "debaters[0].script"),
        ('id = ["a"]', "debaters[0].id"),
    ],
)
def test_wrong_types_in_debaters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], script: str, key: str
) -> None:
    spec = tmp_path / "spec.toml"
    body = OK_SPEC.replace('id = "a"\n', "").replace(
        '[[debaters]]\nmodel = "scripted"', f'[[debaters]]\n{script}\nmodel = "scripted"', 1
    )
    if not script.startswith("id"):
        body = body.replace(f"{script}\n", f'{script}\nid = "a"\n', 1)
    spec.write_text(body)
    code, err = _run_cli(capsys, "validate", str(spec))
    assert code == 2 and key in err and "internal error" not in err, err


HOSTILE_REPLIES = {
    "lone surrogate in raw text": '{"stance": "yes", "vote": "release"} \ud800 trailing',
    "escaped lone surrogate": '{"stance": "a\\ud800b", "rationale": "r", "vote": "release"}',
    "100,000-deep JSON": "[" * 100_000 + "]" * 100_000,
    "100,000-deep JSON in an object": '{"stance": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "5,000-digit integer": '{"stance": "s", "rationale": "r", "vote": "release", "n": '
    + "7" * 5000
    + "}",
    "5,000-digit integer after prose": "Sure: " + "9" * 5000 + ' {"vote": "release"}',
}


class Hostile:
    """A provider that always answers with the same hostile text."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def complete(self, request: TurnRequest, on_token: object) -> TurnReply:
        return TurnReply(text=self.text)

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("case", sorted(HOSTILE_REPLIES))
def test_hostile_reply_is_an_invalid_turn_and_the_session_saves(tmp_path: Path, case: str) -> None:
    text = HOSTILE_REPLIES[case]
    with pytest.raises(TurnParseError):
        parse_turn(text, Position, ["release", "revise", "escalate"])
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, phases=["proposal"], max_rounds=1)
    out = tmp_path / "s.toml"
    live = LiveSession.start(validate_spec(raw), raw, lambda d: Hostile(text), out=out)
    decision = asyncio.run(live.engine.run())
    live.close()
    assert decision.decision == "escalate"
    data = load_session(out)
    assert data.turns and all(t.invalid for t in data.turns)
    assert "\ud800" not in (data.turns[0].raw or "")
    store_text = out.read_text(encoding="utf-8")  # strict UTF-8: no surrogate reached disk
    assert "moot:commit" in store_text


def test_raw_surrogate_inside_the_json_is_kept_as_a_replacement_char(tmp_path: Path) -> None:
    text = '{"stance": "a\ud800b", "rationale": "r", "vote": "release"}'
    raw = debate_raw({"a": ["release"], "b": ["release"]}, phases=["proposal"], max_rounds=1)
    out = tmp_path / "s.toml"
    live = LiveSession.start(validate_spec(raw), raw, lambda d: Hostile(text), out=out)
    asyncio.run(live.engine.run())
    live.close()
    data = load_session(out)
    assert [t.content["stance"] for t in data.turns] == ["a\ufffdb", "a\ufffdb"]


def test_surrogate_reply_prints_and_exports(tmp_path: Path) -> None:
    from tui.commands.headless import run_headless

    text = HOSTILE_REPLIES["lone surrogate in raw text"]
    raw = debate_raw({"a": ["release"], "b": ["revise"]}, phases=["proposal"], max_rounds=1)
    out = tmp_path / "s.toml"
    live = LiveSession.start(validate_spec(raw), raw, lambda d: Hostile(text), out=out)
    sink = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")  # strict, like a real terminal
    try:
        code = run_headless(live, "end", Console(file=sink, force_terminal=False))
    finally:
        live.close()
    sink.flush()
    assert code == 3
    assert main(["export", str(out), "-o", str(tmp_path / "s.md")]) == 0


def test_json_limits_named() -> None:
    with pytest.raises(TurnParseError, match="nested more than 32 deep"):
        extract_json_object('{"a": ' + "[" * 40 + "]" * 40 + "}")
    with pytest.raises(TurnParseError, match="longer than 100 digits"):
        extract_json_object('{"a": ' + "1" * 101 + "}")
    assert extract_json_object('{"a": "' + "[" * 400 + "1" * 400 + '"}')["a"].startswith("[[")
    assert extract_json_object('{"a": ' + "[" * 30 + "]" * 30 + "}")["a"]


def test_list_where_a_refine_id_belongs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.conftest import EXAMPLES

    text = (EXAMPLES / "scripted-refine.toml").read_text()
    spec = tmp_path / "spec.toml"
    spec.write_text(text.replace('synthesizer = "', 'synthesizer = []\nx_was = "', 1))
    code, err = _run_cli(capsys, "validate", str(spec))
    assert code == 2 and "debate.synthesizer" in err and "internal error" not in err, err


def test_toml_dates_refused_by_key_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.toml"
    raw = debate_raw({"a": ["release"], "b": ["release"]}, consensus_threshold=2)
    live = LiveSession.start(validate_spec(raw), raw, lambda d: SCRIPTED, out=out)
    asyncio.run(live.engine.run())
    live.close()
    out.write_text(
        out.read_text().replace('decided_by = "rule"', "decided_by = 1979-05-27T07:32:00Z")
    )
    code, err = _run_cli(capsys, "export", str(out), "--format", "json")
    assert code == 2 and "result.decided_by: a TOML date or time" in err, err
