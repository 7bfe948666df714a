"""A lookup is a read: a debater is offered only the calls a tool marks read-only,
narrowed to the spec's ``calls``; a listed call that may write runs only with
``--allow-tool-writes``, and is recorded as such. Everything else is refused on
record before it reaches the server, and ``moot verify`` re-checks it from the file."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_lookups import challenge_raw, reviewer_turn, turns_of
from tests.helpers import SCRIPTED, run_live
from tests.mcp_tools.notes_server import APPENDED
from tests.tools.test_lookups_mcp import notes_raw
from tui.engine import validate_spec
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.grounding.lookups import digest, lookup_problems
from tui.engine.record.verify import verify_file
from tui.tools.toolbox import RunTools

NOTE = {"tool": "notes", "call": "note", "args": {"topic": "capture"}}
SEARCH = {"tool": "notes", "call": "search", "args": {"query": "capture"}}
APPEND = {"tool": "notes", "call": "append", "args": {"text": "pwned"}}
TIDY = {"tool": "notes", "call": "tidy", "args": {}}
BEFORE = "before\n"


def notes_spec(lookups: list[dict[str, Any]], calls: list[str] | None = None) -> dict[str, Any]:
    raw = notes_raw(lookups, "deduplicated for 24 hours")
    if calls is not None:
        raw["tools"][0]["calls"] = calls
    return raw


def run_notes(raw: dict[str, Any], folder: Path, *, writes: bool = False) -> list[Any]:
    """Run the debate with the notes server rooted in ``folder``; the reviewer's lookups."""
    (folder / APPENDED).write_text(BEFORE)  # append adds to it, tidy removes it
    box = RunTools(validate_spec(raw), folder, writes=writes)

    async def go() -> None:
        try:
            await run_live(raw, lambda d: SCRIPTED, folder / "session.toml", tools=box)
        finally:
            await box.aclose()

    asyncio.run(go())
    review = next(t for t in turns_of(folder / "session.toml") if t.speaker == "reviewer")
    return list(review.lookups or [])


def test_by_default_only_the_calls_a_server_marks_read_only_are_offered(tmp_path: Path) -> None:
    note, append, tidy = run_notes(notes_spec([NOTE, APPEND, TIDY]), tmp_path)
    assert note["ok"] and "writes" not in note
    assert not append["ok"] and append["reason"] == (
        "append is not offered: its server does not mark it read-only (list it in the "
        "tool's calls and run moot with --allow-tool-writes to offer it)"
    )
    assert not tidy["ok"] and tidy["reason"].startswith(
        "tidy is not offered: its server does not mark it read-only"
    )
    assert "writes" not in append and "writes" not in tidy
    assert (tmp_path / APPENDED).read_text() == BEFORE  # neither reached the server
    assert verify_file(tmp_path / "session.toml").ok


def test_the_spec_calls_narrow_the_offer_and_a_listed_write_waits_for_the_flag(
    tmp_path: Path,
) -> None:
    search, append = run_notes(notes_spec([SEARCH, APPEND], calls=["note", "append"]), tmp_path)
    assert not search["ok"] and search["reason"] == (
        "search is not offered: the calls of tool 'notes' in the spec do not list it"
    )
    assert not append["ok"] and append["reason"] == (
        "append is not offered: its server does not mark it read-only "
        "(moot --allow-tool-writes offers it)"
    )
    assert (tmp_path / APPENDED).read_text() == BEFORE
    assert verify_file(tmp_path / "session.toml").ok


def test_allow_tool_writes_runs_a_listed_write_and_records_it(tmp_path: Path) -> None:
    raw = notes_spec([NOTE, APPEND, TIDY], calls=["note", "append"])
    note, append, tidy = run_notes(raw, tmp_path, writes=True)
    assert note["ok"] and "writes" not in note  # a read is still a read
    assert (
        append["ok"] and append["writes"] is True and append["result"] == "appended to " + APPENDED
    )
    assert (
        not tidy["ok"] and "do not list it" in tidy["reason"]
    )  # the flag offers listed calls only
    assert (tmp_path / APPENDED).read_text() == BEFORE + "pwned\n"
    path = tmp_path / "session.toml"
    assert verify_file(path).ok
    text = path.read_text()
    listed = 'calls = [\n    "note",\n    "append",\n]'
    assert text.count(listed) == 1
    path.write_text(text.replace(listed, 'calls = ["note"]'))
    failures = {(c.where, c.field): c.detail for c in verify_file(path).failures}
    assert (
        "append may write, but the calls of tool 'notes' do not list it"
        in failures[("turn 1", "lookups")]
    )


def test_the_lookup_schema_names_only_the_calls_offered(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    class Recording:
        async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
            if request.debater.id == "reviewer" and not seen:
                shape = request.json_schema.get("anyOf", [request.json_schema])[0]
                seen.append(shape["properties"]["lookups"])
            return await SCRIPTED.complete(request, on_token)

        async def aclose(self) -> None:
            return None

    def schema_of(raw: dict[str, Any], writes: bool) -> dict[str, Any]:
        seen.clear()
        folder = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        box = RunTools(validate_spec(raw), folder, writes=writes)

        async def go() -> None:
            try:
                await run_live(raw, lambda d: Recording(), folder / "s.toml", tools=box)
            finally:
                await box.aclose()

        asyncio.run(go())
        return seen[0]

    default = schema_of(notes_spec([NOTE]), writes=True)  # the flag alone offers no write
    assert default["items"]["properties"]["call"]["enum"] == ["crash", "fail", "note", "search"]
    assert "append(" not in default["description"] and "tidy(" not in default["description"]
    listed = schema_of(notes_spec([NOTE], calls=["note", "append"]), writes=True)
    assert listed["items"]["properties"]["call"]["enum"] == ["append", "note"]
    assert "append(text: string)" in listed["description"]


def _record(n: int, tool: str, call: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"L{n}",
        "tool": tool,
        "call": call,
        "args": {},
        "ok": True,
        "result": "text",
        "sha256": digest("text"),
        "bytes": 4,
        **extra,
    }


def test_verify_refuses_a_lookup_the_file_does_not_show_as_offered() -> None:
    raw = notes_spec([], calls=["note", "append"])
    raw["tools"].append(challenge_raw(reviewer_turn("x"))["tools"][0])  # the files tool
    raw["tools"][1]["roles"] = ["adversary"]
    raw["tools"][0]["max_calls_per_turn"] = 8
    spec = validate_spec(raw)
    records = [
        _record(1, "notes", "note"),  # a read within the calls: holds
        _record(2, "notes", "append", writes=True),  # a listed write, allowed: holds
        _record(3, "notes", "search"),
        _record(4, "files", "write"),
        _record(5, "files", "read", writes=True),
        _record(6, "notes", "note", writes=False),
    ]
    assert lookup_problems(spec, "reviewer", records) == [
        "lookup L3: search was not offered: the calls of tool 'notes' omit it",
        "lookup L4: the files tool has no call 'write'",
        "lookup L5: the files tool never writes",
        "lookup L6: writes is only ever true",
    ]
    del raw["tools"][0]["calls"]  # a file written before calls existed: its reads hold
    old = validate_spec(raw)
    assert lookup_problems(old, "reviewer", [_record(1, "notes", "search")]) == []
    assert lookup_problems(old, "reviewer", [_record(1, "notes", "append", writes=True)]) == [
        "lookup L1: append may write, but the calls of tool 'notes' do not list it"
    ]


@pytest.mark.parametrize(
    "command",
    [
        ["run", "spec.toml"],
        ["run", "spec.toml", "--headless"],
        ["resume", "s.toml"],
        ["batch", "specs"],
        ["decide", "s.toml", "--extend"],
        ["mcp"],
    ],
)
def test_only_the_command_line_allows_tool_writes(command: list[str]) -> None:
    from tui.cli import _parser

    assert _parser().parse_args(command).allow_tool_writes is False
    assert _parser().parse_args([*command, "--allow-tool-writes"]).allow_tool_writes is True


def test_the_preflight_says_what_each_tool_lets_whom_do() -> None:
    from tui.providers.preflight import tool_calls

    raw = notes_spec([], calls=["note", "append"])
    raw["tools"].append(challenge_raw(reviewer_turn("x"))["tools"][0])
    spec = validate_spec(raw)
    assert tool_calls(spec) == [
        "tool notes: reviewer may make note, append where its server marks them read-only; "
        "the others may write and are withheld (--allow-tool-writes offers them)",
        "tool files: adversary may list, read and grep docs (reads only)",
    ]
    assert tool_calls(spec, writes=True)[0] == (
        "tool notes: reviewer may make note, append; those its server does not mark "
        "read-only may write (--allow-tool-writes)"
    )
