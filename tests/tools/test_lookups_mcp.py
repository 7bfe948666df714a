"""Lookups through real stdio MCP servers: one written with the SDK here, and the
reference filesystem server from the npm registry (locked in
``tests/mcp_filesystem/package-lock.json``, installed there with ``npm ci``;
skipped, saying why, where ``npx`` is not installed)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_lookups import DESIGN, challenge_raw, reviewer_turn, run, turns_of
from tests.helpers import SCRIPTED, run_live
from tests.mcp_tools.notes_server import NOTE
from tests.npm_packages import install, missing_tools
from tui.engine import validate_spec
from tui.engine.core.ports import ToolFailure
from tui.engine.record.verify import verify_file
from tui.providers.preflight import missing_commands
from tui.tools.toolbox import RunTools

pytestmark = pytest.mark.xdist_group("mcp")  # ./dev.sh test: one worker runs the MCP servers

SERVER = [
    sys.executable,
    str(Path(__file__).resolve().parents[1] / "mcp_tools" / "notes_server.py"),
]
FS = Path(__file__).resolve().parents[1] / "mcp_filesystem"
FS_BIN = FS / "node_modules" / ".bin" / "mcp-server-filesystem"


def notes_raw(lookups: list[dict[str, Any]], quote: str) -> dict[str, Any]:
    raw = challenge_raw(reviewer_turn(quote, lookups))
    raw["tools"] = [{"name": "notes", "mcp": SERVER, "roles": ["reviewer"], "timeout_s": 30}]
    return raw


def test_an_sdk_server_answers_a_lookup_on_record(tmp_path: Path) -> None:
    lookups = [
        {"tool": "notes", "call": "note", "args": {"topic": "capture"}},
        {"tool": "notes", "call": "fail", "args": {"reason": "no such note"}},
        {"tool": "notes", "call": "crash", "args": {}},
        {"tool": "notes", "call": "note", "args": {"topic": "after the crash"}},
    ]
    path = run(notes_raw(lookups, "deduplicated for 24 hours"), tmp_path)
    review = next(t for t in turns_of(path) if t.speaker == "reviewer")
    first, failed, crashed, after = review.lookups or []
    assert first["ok"] and first["result"] == f"capture: {NOTE}"
    assert not failed["ok"] and "no such note" in failed["reason"]
    assert not crashed["ok"] and "notes" in crashed["reason"]
    assert not after["ok"] and "notes" in after["reason"]  # a dead server fails on record
    assert review.derived["rubric"]["properties"][0]["evidence"][0]["admitted"] is True
    assert [t.speaker for t in turns_of(path)] == ["reviewer", "owner"]  # the debate went on
    assert verify_file(path).ok


def test_a_server_that_will_not_start_is_named(tmp_path: Path) -> None:
    raw = notes_raw([], "x")
    raw["tools"][0]["mcp"] = [sys.executable, "-c", "import sys; sys.stdout.write('garbage\\n')"]
    box = RunTools(validate_spec(raw), tmp_path)
    with pytest.raises(ToolFailure, match="tool 'notes': the MCP server .* did not start"):
        asyncio.run(box.start())


def test_preflight_names_a_missing_command() -> None:
    raw = notes_raw([], "x")
    raw["tools"][0]["mcp"] = ["no-such-mcp-server-anywhere", "--flag"]
    assert missing_commands(validate_spec(raw)) == [
        "tools: 'notes': command 'no-such-mcp-server-anywhere' not found on PATH"
    ]
    assert missing_commands(validate_spec(notes_raw([], "x"))) == []


@pytest.fixture(scope="module")
def filesystem_server() -> Path:
    """The locked reference server, installed with ``npm ci`` when the lock changed."""
    if missing := missing_tools():
        pytest.skip(
            f"{' and '.join(missing)} not on PATH: the reference filesystem server is an npm package"
        )
    install(FS)
    return FS_BIN


def test_the_reference_filesystem_server_and_the_files_tool_ground_a_challenge(
    filesystem_server: Path, tmp_path: Path
) -> None:
    """The issue's done-when: the adversary reads the design through both tools, its
    quotes are admitted only verbatim, the defender is refused on record, verify passes
    and catches an edited result."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "design.md").write_text(DESIGN)
    lookups = [
        {"tool": "fs", "call": "read_text_file", "args": {"path": str(docs / "design.md")}},
        {"tool": "files", "call": "grep", "args": {"pattern": "at least once"}},
        {"tool": "fs", "call": "read_text_file", "args": {"path": "/etc/hostname"}},
    ]
    turn = reviewer_turn("deduplicates on the event id for 24 hours", lookups)
    turn["rubric"][0]["evidence"].append(
        {"kind": "tool_quote", "source": "L2", "quote": "The relay publishes exactly once."}
    )
    owner = {
        "lookups": [{"tool": "fs", "call": "read_text_file", "args": {"path": "design.md"}}],
        "revised_artifact": "Key captures on the order id.",
    }
    raw = challenge_raw(turn, owner)
    raw["tools"].append(
        {"name": "fs", "mcp": [str(filesystem_server), str(docs)], "roles": ["adversary"]}
    )
    path = run(raw, tmp_path)
    review, defense = turns_of(path)
    fs_read, grep, outside = review.lookups or []
    assert fs_read["ok"] and fs_read["result"] == DESIGN
    assert grep["ok"] and grep["result"] == "design.md:1: The relay publishes at least once."
    assert not outside["ok"]  # the server refuses a path outside its allowed folder
    evidence = review.derived["rubric"]["properties"][0]["evidence"]
    assert [e["admitted"] for e in evidence] == [True, False]
    [refused] = defense.lookups or []
    assert not refused["ok"] and refused["reason"] == "tool 'fs' is not given to owner"
    assert verify_file(path).ok
    text = path.read_text()
    path.write_text(text.replace("for 24 hours.", "for 48 hours.", 1))
    failures = {(c.where, c.field): c.detail for c in verify_file(path).failures}
    assert "does not hash to its sha256" in failures[("turn 1", "lookups")]


def test_run_live_closes_the_server(tmp_path: Path) -> None:
    """The server process is gone once the run's tools are closed."""
    raw = notes_raw([{"tool": "notes", "call": "note", "args": {"topic": "a"}}], "keyed")
    box = RunTools(validate_spec(raw), tmp_path)

    async def go() -> int:
        try:
            await run_live(raw, lambda d: SCRIPTED, tmp_path / "s.toml", tools=box)
        finally:
            await box.aclose()
        return len(asyncio.all_tasks())

    assert asyncio.run(go()) == 1  # only the test's own task is left: the server's is done


def test_the_debater_is_told_each_mcp_calls_arguments(tmp_path: Path) -> None:
    """The schema's description names each call's arguments and types, from the server."""
    from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest

    described: list[str] = []

    class Recording:
        async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
            if request.debater.id == "reviewer" and not described:
                shape = request.json_schema.get("anyOf", [request.json_schema])[0]
                described.append(shape["properties"]["lookups"]["description"])
            return await SCRIPTED.complete(request, on_token)

        async def aclose(self) -> None:
            return None

    raw = notes_raw([{"tool": "notes", "call": "note", "args": {"topic": "capture"}}], "keyed")
    box = RunTools(validate_spec(raw), tmp_path)

    async def go() -> None:
        try:
            await run_live(raw, lambda d: Recording(), tmp_path / "s.toml", tools=box)
        finally:
            await box.aclose()

    asyncio.run(go())
    [text] = described
    assert "Tool notes: " in text
    assert "note(topic: string)" in text
    assert "search(query: string, limit?: integer, tags?: array of string | null)" in text
    assert "crash()" in text


def test_argument_hints_are_bounded_plain_names_and_types() -> None:
    from tui.tools.mcp_client import MAX_ARGS, MAX_HINT, signature

    hostile = {
        "type": "object",
        "properties": {
            "[bold red]boom[/]": {"type": "string"},
            "path": {"type": "[link=https://x]string"},
            "n" * 500: {"type": "integer"},
            **{f"a{i}": {"type": "string"} for i in range(40)},
        },
        "required": ["path", "[bold red]boom[/]"],
    }
    hint = signature(hostile)
    assert "[" not in hint and "]" not in hint  # no markup survives
    assert hint.startswith("path: any, a0?: string, ")  # unknown type 'any'; odd names dropped
    assert "n" * 65 not in hint and len(hint) <= MAX_HINT
    assert hint.endswith(f"(+{40 + 3 - MAX_ARGS} more)")
    assert signature({"type": "object"}) == "" and signature("garbage") == ""


def test_the_readme_example_reads_and_writes_only_with_allow_tool_writes(
    filesystem_server: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/spec.md's ``[[tools]]`` example over ``architecture/``: a reviewer's
    ``write_file`` and ``move_file`` are refused on record and touch nothing; with the
    spec listing them and ``--allow-tool-writes`` they run, recorded as writes."""
    import tomli_w

    from tui.cli import main
    from tui.exitcodes import ExitCode

    arch = tmp_path / "architecture"
    arch.mkdir()
    incident = arch / "incident-2026-03.md"
    incident.write_text(DESIGN)
    lookups = [
        {"tool": "fs", "call": "read_text_file", "args": {"path": "incident-2026-03.md"}},
        {"tool": "fs", "call": "write_file", "args": {"path": "pwned.md", "content": "pwned"}},
        {
            "tool": "fs",
            "call": "move_file",
            "args": {"source": "incident-2026-03.md", "destination": "moved.md"},
        },
    ]
    raw = challenge_raw(reviewer_turn("deduplicates on the event id", lookups))
    raw["tools"] = [
        {"name": "fs", "mcp": [str(filesystem_server), "architecture"], "roles": ["reviewer"]}
    ]

    def run_cli(name: str, *flags: str) -> list[dict[str, Any]]:
        spec = tmp_path / f"{name}.toml"
        spec.write_text(tomli_w.dumps(raw))
        out = tmp_path / f"{name}-session.toml"
        code = main(["run", str(spec), "--headless", "--out", str(out), "--allow-tools", *flags])
        assert code in (ExitCode.DECIDED, ExitCode.UNRESOLVED), capsys.readouterr().err  # ran
        assert verify_file(out).ok
        return list(turns_of(out)[0].lookups or [])

    read, write, move = run_cli("reads")
    assert read["ok"] and read["result"] == DESIGN and "writes" not in read
    for refused in (write, move):
        assert not refused["ok"] and "writes" not in refused
        assert refused["reason"] == (
            f"{refused['call']} is not offered: its server does not mark it read-only (list "
            "it in the tool's calls and run moot with --allow-tool-writes to offer it)"
        )
    assert sorted(p.name for p in arch.iterdir()) == ["incident-2026-03.md"]  # nothing changed
    assert "moot: tool fs: reviewer may make the calls its server marks read-only" in (
        capsys.readouterr().err
    )

    raw["tools"][0]["calls"] = ["read_text_file", "write_file", "move_file"]
    read, write, move = run_cli("writes", "--allow-tool-writes")
    assert read["ok"] and "writes" not in read
    assert write["ok"] and write["writes"] is True
    assert move["ok"] and move["writes"] is True
    assert (arch / "pwned.md").read_text() == "pwned"
    assert not incident.exists() and (arch / "moved.md").read_text() == DESIGN
    assert "may write (--allow-tool-writes)" in capsys.readouterr().err
