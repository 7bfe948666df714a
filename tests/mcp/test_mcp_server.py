"""``moot mcp``: the six tools driven by the MCP SDK's own client, in-process and over stdio.

Every debate here is scripted (no network, no key). The in-process client speaks
both the current protocol and the legacy handshake, since elicitation travels
differently in each (an input-required result, or a request mid-call).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.types import CallToolResult, ElicitRequestFormParams, ElicitRequestParams, ElicitResult

from tests.batch_specs import blocked, unresolved, write
from tests.helpers import with_script
from tui.app.screens.home import list_sessions
from tui.commands.inbox import awaiting
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.mcp_server import MootServer
from tui.providers.scripted import ScriptedProvider

pytestmark = pytest.mark.xdist_group("mcp")  # ./dev.sh test: one worker runs the MCP servers

MODES = ["auto", "legacy"]  # 2026-07-28 (negotiated), and the initialize handshake


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def server(folder: Path, tmp_path: Path) -> MootServer:
    """The tests' specs lie beside the sessions folder, so the server may read there."""
    provider = ScriptedProvider()
    return MootServer(folder, lambda d: provider, allow_read=[str(tmp_path)])


def _ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


def _error(result: CallToolResult) -> str:
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


class Answers:
    """An elicitation callback that answers from a list and keeps what it was asked."""

    def __init__(self, *answers: ElicitResult) -> None:
        self.answers = list(answers)
        self.asked: list[ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult:
        self.asked.append(params)
        return self.answers.pop(0)


def _slow_spec(tmp_path: Path) -> Path:
    """The unresolved debate, each turn taking 150 ms: a run still going when looked at."""
    raw = unresolved()
    for debater in ("a", "b"):
        raw = with_script(raw, debater, turn_delay_ms=150)
    return write(tmp_path / "slow.toml", raw)


async def holds(session: str | Path) -> bool:
    """``moot verify`` on the file (it runs its own event loop, so off this one)."""
    return (await asyncio.to_thread(verify_file, session)).ok


def accept(vote: str, rationale: str) -> ElicitResult:
    return ElicitResult(action="accept", content={"vote": vote, "rationale": rationale})


async def test_six_tools_each_with_an_input_and_an_output_schema(server: MootServer) -> None:
    async with Client(server.mcp) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"run", "status", "inbox", "decide", "verify", "export"}
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.description
    assert tools["run"].input_schema["required"] == ["spec"]
    assert tools["decide"].input_schema["required"] == ["session", "vote", "rationale"]
    export_format = tools["export"].input_schema["properties"]["format"]
    assert export_format["enum"] == ["markdown", "json", "adr"]
    run_output = tools["run"].output_schema
    assert run_output is not None and "asked_user" in run_output["properties"]
    assert tools["status"].annotations is not None and tools["status"].annotations.read_only_hint


@pytest.mark.parametrize("mode", MODES)
async def test_run_wait_inbox_decide_status_verify_export(
    server: MootServer, folder: Path, tmp_path: Path, mode: str
) -> None:
    spec = write(tmp_path / "split.toml", unresolved())
    reported: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, message))

    async with Client(server.mcp, mode=mode) as client:  # no elicitation: nobody to ask
        ran = _ok(
            await client.call_tool(
                "run", {"spec": str(spec), "wait": True}, progress_callback=on_progress
            )
        )
        session = Path(ran["session"])
        assert session.parent == folder
        assert ran["status"] == "awaiting_decision" and ran["asked_user"] == "unsupported"
        assert ran["decision"] == "escalate" and ran["decision_rule"] == "max_rounds_exhausted"
        assert ran["tally"] == {"release": 1, "revise": 1, "escalate": 0}
        turns = load_session(session).turns
        assert [v for v, _ in reported] == list(range(1, len(turns) + 1))
        assert reported[0][1] == "turn 1: r1 proposal a vote release"

        # Listed like any other session: the inbox tool, moot inbox and the console's home.
        inbox = _ok(await client.call_tool("inbox", {}))["sessions"]
        assert [e["session"] for e in inbox] == [str(session)]
        assert inbox[0]["votes"] == ["release", "revise", "escalate"]
        assert [a.path for a in awaiting(folder)] == [session]
        assert [r.path for r in list_sessions(folder)] == [session]

        before = session.read_bytes()
        refused = _error(
            await client.call_tool(
                "decide", {"session": session.name, "vote": "ship", "rationale": "It is fine."}
            )
        )
        assert "vote: 'ship' is not one of release, revise, escalate" in refused
        assert "--vote" not in refused and "Traceback" not in refused
        assert session.read_bytes() == before

        decided = _ok(
            await client.call_tool(
                "decide",
                {"session": str(session), "vote": "revise", "rationale": "Roll back first."},
            )
        )
        assert decided["status"] == "decided" and decided["decision"] == "revise"
        assert decided["decided_by"] == "operator" and decided["decided_via"] == "mcp"
        again = _error(
            await client.call_tool(
                "decide", {"session": str(session), "vote": "release", "rationale": "No, ship."}
            )
        )
        assert "already decided: revise" in again

        status = _ok(await client.call_tool("status", {"session": session.stem}))
        assert status["status"] == "decided" and status["rationale"] == "Roll back first."
        assert status["round"] == 1 and status["phase"] == turns[-1].phase
        assert status["turns"] == len(turns)
        assert status["result"]["decided_via"] == "mcp"
        assert _ok(await client.call_tool("inbox", {}))["sessions"] == []

        verified = _ok(await client.call_tool("verify", {"session": str(session)}))
        assert verified["ok"] and not verified["failures"]
        assert any(c["field"] == "via" for c in verified["claims"])
        adr = _ok(await client.call_tool("export", {"session": str(session), "format": "adr"}))
        assert adr["format"] == "adr" and "revise" in adr["text"]
        assert "Roll back first." in adr["text"]
        assert "decided by operator, relayed via `mcp`)." in adr["text"]
        exported = _ok(await client.call_tool("export", {"session": str(session)}))
        assert exported["format"] == "markdown" and "Split debate" in exported["text"]
        assert "(operator, via `mcp`)" in exported["text"]
    assert await holds(session)


@pytest.mark.parametrize("mode", MODES)
async def test_an_escalation_asks_the_clients_user_and_records_it(
    server: MootServer, tmp_path: Path, mode: str
) -> None:
    spec = write(tmp_path / "split.toml", unresolved())
    answers = Answers(
        accept("revise", "-- 42 !"),  # refused: no rationale in words, and asked again
        accept("revise", "Roll back first."),
    )
    async with Client(server.mcp, mode=mode, elicitation_callback=answers) as client:
        ran = _ok(await client.call_tool("run", {"spec": str(spec), "wait": True}))
    assert ran["asked_user"] == "accepted" and ran["status"] == "decided"
    assert ran["decided_by"] == "operator" and ran["decided_via"] == "mcp_elicitation"
    assert len(answers.asked) == 2
    first, second = answers.asked
    assert isinstance(first, ElicitRequestFormParams)
    assert "ended unresolved" in first.message and "release 1, revise 1" in first.message
    assert first.requested_schema["properties"]["vote"]["enum"] == [
        "release",
        "revise",
        "escalate",
    ]
    assert "refused" in second.message and "rationale in words" in second.message
    data = load_session(Path(ran["session"]))
    assert [(a["action"], a.get("via")) for a in data.actions] == [("decide", "mcp_elicitation")]
    assert await holds(data.path)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_question_leaves_it_in_the_inbox(
    server: MootServer, folder: Path, tmp_path: Path, mode: str, action: str
) -> None:
    spec = write(tmp_path / "split.toml", unresolved())
    answers = Answers(ElicitResult(action=action))
    async with Client(server.mcp, mode=mode, elicitation_callback=answers) as client:
        ran = _ok(await client.call_tool("run", {"spec": str(spec), "wait": True}))
    assert ran["asked_user"] == {"decline": "declined", "cancel": "cancelled"}[action]
    assert ran["status"] == "awaiting_decision"
    assert [a.path for a in awaiting(folder)] == [Path(ran["session"])]


async def test_a_protocol_veto_is_a_tool_error_with_its_reason(
    server: MootServer, tmp_path: Path
) -> None:
    spec = write(tmp_path / "blocked.toml", blocked())
    async with Client(server.mcp) as client:
        ran = _ok(await client.call_tool("run", {"spec": str(spec), "wait": True}))
        session = ran["session"]
        refused = _error(
            await client.call_tool(
                "decide", {"session": session, "vote": "release", "rationale": "Ship anyway."}
            )
        )
        assert "blocking mode" in refused and "C1.1" in refused
        ok = _ok(
            await client.call_tool(
                "decide", {"session": session, "vote": "revise", "rationale": "Make it safe."}
            )
        )
    assert ok["decision"] == "revise"


async def test_run_without_wait_returns_at_once_and_status_follows_it(
    server: MootServer, tmp_path: Path
) -> None:
    spec = _slow_spec(tmp_path)
    async with Client(server.mcp) as client:
        ran = _ok(await client.call_tool("run", {"spec": str(spec)}))
        assert ran["status"] == "running" and ran["turns"] == 0 and ran["asked_user"] is None
        busy = _error(
            await client.call_tool(
                "decide", {"session": ran["session"], "vote": "revise", "rationale": "Too soon."}
            )
        )
        assert "it is running" in busy
        deadline = time.monotonic() + 60
        seen = set()
        while True:
            status = _ok(await client.call_tool("status", {"session": ran["session"]}))
            seen.add(status["status"])
            if status["status"] != "running" or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
    assert status["status"] == "awaiting_decision"
    assert "running" in seen and status["phase"] is not None
    assert await holds(ran["session"])


async def test_a_run_that_ends_while_status_reads_its_file_is_not_called_unfinished(
    server: MootServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is read off the loop; a run ending meanwhile has its result in the file."""
    import tui.mcp_server as served
    from tui.mcp_runs import read_session as real

    def read_then_let_the_run_end(path: Any) -> Any:
        data = real(path)  # read while the debate runs: no result yet
        [running] = server.runs._runs.values()
        deadline = time.monotonic() + 60
        while not running.ended and time.monotonic() < deadline:
            time.sleep(0.01)  # this thread waits for the loop to finish the debate
        return data

    async with Client(server.mcp) as client:
        ran = _ok(await client.call_tool("run", {"spec": str(_slow_spec(tmp_path))}))
        monkeypatch.setattr(served, "read_session", read_then_let_the_run_end)
        status = _ok(await client.call_tool("status", {"session": ran["session"]}))
    assert status["status"] == "awaiting_decision", status["status"]


async def test_a_spec_given_as_toml_text(server: MootServer, folder: Path) -> None:
    text = tomli_w.dumps(unresolved("From text"))
    async with Client(server.mcp) as client:
        ran = _ok(await client.call_tool("run", {"spec": text, "wait": True}))
        assert ran["title"] == "From text" and ran["status"] == "awaiting_decision"
        assert load_session(ran["session"]).meta["spec_source"] == "(TOML text given over MCP)"

        naming_a_file = unresolved()
        naming_a_file["context"] = [{"label": "notes", "file": "/etc/hostname"}]
        refused = _error(
            await client.call_tool("run", {"spec": tomli_w.dumps(naming_a_file), "wait": True})
        )
        assert "context[0]: a spec given as text has no folder" in refused

        bad = unresolved()
        bad["debate"]["max_rounds"] = 0
        problems = _error(await client.call_tool("run", {"spec": tomli_w.dumps(bad)}))
        assert "debate.max_rounds" in problems and "Traceback" not in problems
    assert len(list(folder.glob("*.toml"))) == 1  # refused specs wrote nothing


async def test_a_bare_name_is_looked_up_only_in_the_sessions_folder(
    server: MootServer, folder: Path, tmp_path: Path
) -> None:
    spec = write(tmp_path / "split.toml", unresolved())
    async with Client(server.mcp) as client:
        ran = _ok(await client.call_tool("run", {"spec": str(spec), "wait": True}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    outside = elsewhere / "outside.toml"
    outside.write_bytes(Path(ran["session"]).read_bytes())
    async with Client(server.mcp) as client:
        missing = _error(await client.call_tool("status", {"session": "outside"}))
        assert str(folder / "outside.toml") in missing
        by_path = _ok(await client.call_tool("status", {"session": str(outside)}))
        assert by_path["session"] == str(outside)
        wrong_kind = _error(await client.call_tool("verify", {"session": str(spec)}))
        assert "is a spec, not a session file" in wrong_kind
        empty = _error(await client.call_tool("status", {"session": "  "}))
        assert "name a session" in empty


def test_over_stdio_with_the_sdk_client(tmp_path: Path) -> None:
    """The real command, ``moot mcp``, as a coding agent starts it."""
    spec = write(tmp_path / "split.toml", unresolved())
    folder = tmp_path / "sessions"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tui", "mcp", "--sessions-dir", str(folder), "--allow-read", str(tmp_path)],
        cwd=str(tmp_path),
    )

    async def main() -> tuple[set[str], dict[str, Any], dict[str, Any]]:
        async with Client(params, read_timeout_seconds=120) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            ran = _ok(await client.call_tool("run", {"spec": str(spec), "wait": True}))
            inbox = _ok(await client.call_tool("inbox", {}))
        return names, ran, inbox

    names, ran, inbox = asyncio.run(main())
    assert names == {"run", "status", "inbox", "decide", "verify", "export"}
    assert ran["status"] == "awaiting_decision"
    assert [e["session"] for e in inbox["sessions"]] == [ran["session"]]
    assert Path(ran["session"]).parent == folder
    assert verify_file(ran["session"]).ok


def test_without_the_extra_a_clear_message_and_exit_2() -> None:
    hide = (
        "import sys; sys.modules['mcp'] = None; "  # as if the extra were not installed
        "from tui.cli import main; raise SystemExit(main(['mcp']))"
    )
    done = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pip install 'moot[mcp]'" in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""  # stdout is the protocol's: nothing else is ever printed there


async def test_a_wait_the_client_gives_up_on_leaves_the_debate_running(
    server: MootServer, folder: Path, tmp_path: Path
) -> None:
    spec = _slow_spec(tmp_path)
    async with Client(server.mcp) as client:
        waiting = asyncio.create_task(client.call_tool("run", {"spec": str(spec), "wait": True}))
        deadline = time.monotonic() + 30
        while not list(folder.glob("*.toml")) and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        (session,) = folder.glob("*.toml")
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        deadline = time.monotonic() + 60
        while True:
            status = _ok(await client.call_tool("status", {"session": str(session)}))
            if status["status"] != "running" or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
    assert status["status"] == "awaiting_decision", status
    assert status["turns"] == len(load_session(session).turns) > 0
    assert await holds(session)


async def test_a_run_going_when_the_server_stops_keeps_its_turns_and_can_resume(
    server: MootServer, tmp_path: Path
) -> None:
    spec = _slow_spec(tmp_path)
    async with Client(server.mcp) as client:
        session = Path(_ok(await client.call_tool("run", {"spec": str(spec)}))["session"])
        deadline = time.monotonic() + 30
        while not load_session(session).turns and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        await server.runs.shutdown()  # what serve_stdio does when the client closes stdin
        status = _ok(await client.call_tool("status", {"session": str(session)}))
    assert status["status"] == "unfinished" and status["result"] is None
    assert status["turns"] == len(load_session(session).turns) >= 1
    resumed = subprocess.run(
        [sys.executable, "-m", "tui", "resume", str(session), "--headless"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 3, resumed.stderr  # it goes on to its end: unresolved
    assert await holds(session)


@pytest.mark.parametrize("mode", MODES)
async def test_an_unconverged_estimate_asks_for_a_number(
    server: MootServer, tmp_path: Path, mode: str
) -> None:
    from tests.engine.test_delphi import spread_out

    answers = Answers(
        accept("soon", "The lead's history holds."),  # refused: not a number, asked again
        accept("9.5", "The lead's history holds."),
    )
    async with Client(server.mcp, mode=mode, elicitation_callback=answers) as client:
        spec = str(spread_out(tmp_path))
        ran = _ok(await client.call_tool("run", {"spec": spec, "wait": True}))
    assert ran["asked_user"] == "accepted" and ran["decision"] == "9.5"
    assert ran["votes"] == [] and "a number in engineer-days" in ran["value"]
    first, second = answers.asked
    assert isinstance(first, ElicitRequestFormParams)
    vote = first.requested_schema["properties"]["vote"]
    assert "enum" not in vote and vote["type"] == "string"
    assert "a number in engineer-days" in vote["description"]
    assert "'soon' is not a number" in second.message
    assert await holds(ran["session"])


async def test_an_operators_escalate_leaves_it_awaiting_in_status_and_inbox(
    server: MootServer, folder: Path, tmp_path: Path
) -> None:
    """Deciding "escalate" defers to a person: status must not call it decided."""
    spec = write(tmp_path / "split.toml", unresolved())
    answers = Answers(ElicitResult(action="decline"))
    async with Client(server.mcp, elicitation_callback=answers) as client:
        ran = _ok(await client.call_tool("run", {"spec": str(spec), "wait": True}))
        deferred = _ok(
            await client.call_tool(
                "decide",
                {
                    "session": ran["session"],
                    "vote": "escalate",
                    "rationale": "The DBA must sign off on the rollback plan first.",
                },
            )
        )
        again = _ok(await client.call_tool("status", {"session": ran["session"]}))
        inbox = _ok(await client.call_tool("inbox", {}))
    assert deferred["status"] == again["status"] == "awaiting_decision"
    assert [e["session"] for e in inbox["sessions"]] == [ran["session"]]
    assert "DBA must sign off" in inbox["sessions"][0]["rationale"]


async def test_the_inbox_asks_an_estimate_for_a_value_not_the_default_votes(
    server: MootServer, tmp_path: Path
) -> None:
    from tests.engine.test_delphi import spread_out

    answers = Answers(ElicitResult(action="decline"))
    async with Client(server.mcp, elicitation_callback=answers) as client:
        ran = _ok(await client.call_tool("run", {"spec": str(spread_out(tmp_path)), "wait": True}))
        inbox = _ok(await client.call_tool("inbox", {}))
    [entry] = inbox["sessions"]
    assert entry["session"] == ran["session"]
    assert entry["votes"] == ran["votes"] == []
    assert entry["value"] == ran["value"] and "a number in engineer-days" in entry["value"]
