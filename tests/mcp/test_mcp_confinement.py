"""``moot mcp`` takes its paths from an agent, which may have been pointed at a cloned
repository: it starts no program a spec names unless the person started it with
``--allow-tools``, and reads or writes no file outside the sessions folder and the
folders given with ``--allow-read`` (symlinks judged by where they point)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from tests.batch_specs import unresolved, write
from tests.engine.test_lookups import challenge_raw, reviewer_turn, turns_of
from tests.mcp_tools.notes_server import NOTE
from tui.engine.record.session import load_session
from tui.mcp_server import MootServer
from tui.providers.scripted import ScriptedProvider

NOTES = Path(__file__).resolve().parents[1] / "mcp_tools" / "notes_server.py"
READERS = ("status", "verify", "export")


def _text(result: CallToolResult) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content)


def marking_spec(cloned: Path, marker: Path) -> Path:
    """A review whose ``notes`` tool is a program: it writes ``marker``, then serves notes."""
    start = (
        f"import pathlib, runpy; pathlib.Path({str(marker)!r}).write_text('started'); "
        f"runpy.run_path({str(NOTES)!r}, run_name='__main__')"
    )
    lookup = [{"tool": "notes", "call": "note", "args": {"topic": "capture"}}]
    raw = challenge_raw(reviewer_turn("deduplicated for 24 hours", lookup))
    raw["tools"] = [
        {
            "name": "notes",
            "mcp": [sys.executable, "-c", start],
            "roles": ["reviewer"],
            "timeout_s": 30,
        }
    ]
    return write(cloned / "review.toml", raw)


def over_stdio(tmp_path: Path, spec: Path, *flags: str) -> CallToolResult:
    """``run`` with wait on the real ``moot mcp`` command, as a coding agent starts it."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tui", "mcp", "--sessions-dir", str(tmp_path / "sessions"), *flags],
        cwd=str(tmp_path),
        env={"MOOT_CONFIG_DIR": str(tmp_path / "config")},
    )

    async def main() -> CallToolResult:
        async with Client(params, read_timeout_seconds=120) as client:
            return await client.call_tool("run", {"spec": str(spec), "wait": True})

    return asyncio.run(main())


def test_a_spec_path_starts_no_command_without_allow_tools(tmp_path: Path) -> None:
    cloned, marker = tmp_path / "cloned", tmp_path / "marker"
    spec = marking_spec(cloned, marker)
    refused = over_stdio(tmp_path, spec, "--allow-read", str(cloned))
    assert refused.is_error
    said = _text(refused)
    assert f"notes runs {sys.executable} -c" in said, said
    assert "--allow-tools" in said and "Traceback" not in said
    assert not marker.exists()
    assert not list((tmp_path / "sessions").glob("*.toml"))  # refused before any file exists


def test_with_allow_tools_the_spec_command_starts(tmp_path: Path) -> None:
    cloned, marker = tmp_path / "cloned", tmp_path / "marker"
    spec = marking_spec(cloned, marker)
    ran = over_stdio(tmp_path, spec, "--allow-read", str(cloned), "--allow-tools")
    assert not ran.is_error, _text(ran)
    assert marker.read_text() == "started"
    assert ran.structured_content is not None
    review = next(
        t for t in turns_of(Path(ran.structured_content["session"])) if t.speaker == "reviewer"
    )
    [lookup] = review.lookups or []
    assert lookup["ok"] is True and lookup["result"] == f"capture: {NOTE}", lookup


# ----------------------------------------------------------------- paths
@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    """The one folder the server was given with ``--allow-read``."""
    return tmp_path / "specs"


@pytest.fixture
def server(folder: Path, specs: Path) -> MootServer:
    provider = ScriptedProvider()
    return MootServer(folder, lambda d: provider, allow_read=[str(specs)])


async def awaiting_session(server: MootServer, specs: Path) -> Path:
    """A session in the sessions folder that awaits a decision."""
    spec = write(specs / "split.toml", unresolved())
    async with Client(server.mcp) as client:
        ran = await client.call_tool("run", {"spec": str(spec), "wait": True})
    assert not ran.is_error, _text(ran)
    assert ran.structured_content is not None
    return Path(ran.structured_content["session"])


async def calls(server: MootServer, session: str) -> dict[str, CallToolResult]:
    """Every tool that takes a session, given ``session``."""
    args: dict[str, dict[str, Any]] = {name: {"session": session} for name in READERS}
    args["decide"] = {"session": session, "vote": "revise", "rationale": "Roll back first."}
    async with Client(server.mcp) as client:
        return {name: await client.call_tool(name, given) for name, given in args.items()}


async def test_a_session_outside_the_sessions_folder_and_allow_read_is_refused(
    server: MootServer, specs: Path, tmp_path: Path
) -> None:
    session = await awaiting_session(server, specs)
    outside = tmp_path / "elsewhere" / "outside.toml"
    outside.parent.mkdir()
    outside.write_bytes(session.read_bytes())
    before = outside.read_bytes()
    for tool, result in (await calls(server, str(outside))).items():
        assert result.is_error, tool
        said = _text(result)
        assert str(outside) in said and "outside the sessions folder" in said, said
        assert "--allow-read" in said and "Traceback" not in said
    assert outside.read_bytes() == before
    assert load_session(outside).result == load_session(session).result
    assert not load_session(outside).actions


async def test_a_symlink_in_the_sessions_folder_pointing_outside_is_refused(
    server: MootServer, folder: Path, specs: Path, tmp_path: Path
) -> None:
    session = await awaiting_session(server, specs)
    outside = tmp_path / "elsewhere" / "outside.toml"
    outside.parent.mkdir()
    outside.write_bytes(session.read_bytes())
    before = outside.read_bytes()
    link = folder / "link.toml"
    link.symlink_to(outside)
    for given in ("link", str(link)):
        for tool, result in (await calls(server, given)).items():
            assert result.is_error, (tool, given)
            said = _text(result)
            assert str(outside) in said and "outside the sessions folder" in said, said
    assert outside.read_bytes() == before


async def test_a_spec_outside_the_allowed_folders_is_refused_unread(
    server: MootServer, folder: Path, specs: Path, tmp_path: Path
) -> None:
    spec = write(tmp_path / "cloned" / "split.toml", unresolved())
    folder.mkdir()
    link = folder / "linked.toml"
    link.symlink_to(spec)
    async with Client(server.mcp) as client:
        for given in (spec, link):
            refused = await client.call_tool("run", {"spec": str(given), "wait": True})
            assert refused.is_error
            said = _text(refused)
            assert str(spec) in said and "outside the sessions folder" in said, said
    assert [p for p in folder.glob("*.toml") if not p.is_symlink()] == []  # nothing written


async def test_names_and_allowed_paths_keep_working(
    server: MootServer, folder: Path, specs: Path
) -> None:
    session = await awaiting_session(server, specs)
    copy = specs / "copy.toml"
    copy.write_bytes(session.read_bytes())
    async with Client(server.mcp) as client:
        by_name = await client.call_tool("status", {"session": session.stem})
        by_allowed_path = await client.call_tool("verify", {"session": str(copy)})
        decided = await client.call_tool(
            "decide", {"session": session.name, "vote": "revise", "rationale": "Roll back."}
        )
    for result in (by_name, by_allowed_path, decided):
        assert not result.is_error, _text(result)
    recorded = load_session(session).result
    assert recorded is not None and recorded["decision"] == "revise"
