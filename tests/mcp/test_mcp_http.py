"""``moot mcp --http``: the tools over streamable HTTP, as a separate process on loopback.

Each test starts the real command on a free port and talks to it with the MCP SDK's
HTTP client (or httpx, for what the guard refuses). The debates are scripted and slow
enough (``turn_delay_ms``) that a client can leave while one is still running.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, ElicitRequestParams, ElicitResult

from tests.batch_specs import unresolved, write
from tests.helpers import with_script
from tests.mcp_http_server import HttpServer
from tui.cli import main
from tui.commands.inbox import awaiting
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file

pytestmark = pytest.mark.xdist_group("mcp")  # ./dev.sh test: one worker runs the MCP servers

TOOLS = {"run", "status", "inbox", "decide", "verify", "export"}
MODES = ["auto", "legacy"]  # 2026-07-28 (one request per exchange), and sessions with a handshake


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[HttpServer]:
    server = HttpServer(tmp_path)
    try:
        yield server
    finally:
        server.stop()


def _ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


def _slow_spec(tmp_path: Path) -> Path:
    """Two debaters who never agree over two rounds, each turn taking 400 ms."""
    raw = unresolved()
    raw["debate"]["max_rounds"] = 2
    for debater in ("a", "b"):
        raw = with_script(raw, debater, turn_delay_ms=400)
    return write(tmp_path / "slow.toml", raw)


def _bearer(url: str, token: str) -> Any:
    """The SDK's HTTP transport sending the token as a header, not in the URL."""
    headers = {"Authorization": f"Bearer {token}"}
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))


@pytest.mark.parametrize("mode", MODES)
def test_a_run_outlives_the_client_that_started_it(
    http_server: HttpServer, tmp_path: Path, mode: str
) -> None:
    """A client leaves mid-run; the debate goes on; a new client follows it and decides it."""
    url, token = http_server.started()
    spec = _slow_spec(tmp_path)

    async def leave_mid_run() -> tuple[set[str], Path, int]:
        first_turn = asyncio.Event()

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            first_turn.set()

        async with Client(f"{url}?token={token}", mode=mode) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            call = asyncio.create_task(
                client.call_tool(
                    "run", {"spec": str(spec), "wait": True}, progress_callback=on_progress
                )
            )
            await asyncio.wait_for(first_turn.wait(), timeout=60)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
        (session,) = http_server.folder.glob("*.toml")
        return names, session, len(load_session(session).turns)

    names, session, turns_when_left = asyncio.run(leave_mid_run())
    assert names == TOOLS

    async def come_back() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], set[str]]:
        async with Client(_bearer(url, token), mode=mode) as client:
            deadline = time.monotonic() + 60
            seen = set()
            while True:
                status = _ok(await client.call_tool("status", {"session": session.name}))
                seen.add(status["status"])
                if status["status"] != "running" or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.05)
            decided = _ok(
                await client.call_tool(
                    "decide",
                    {"session": str(session), "vote": "revise", "rationale": "Back from lunch."},
                )
            )
            inbox = _ok(await client.call_tool("inbox", {}))
        return status, decided, inbox, seen

    status, decided, inbox, seen = asyncio.run(come_back())
    assert status["status"] == "awaiting_decision", status
    assert status["decision_rule"] == "max_rounds_exhausted"
    assert status["turns"] > turns_when_left  # turns were written after the client left
    assert decided["decision"] == "revise" and decided["decided_via"] == "mcp"
    assert inbox["sessions"] == [] and awaiting(http_server.folder) == []
    assert verify_file(session).ok
    assert http_server.stop() == ""  # stdout is not the protocol's here, and stays empty
    assert http_server.proc.returncode == 0  # Ctrl+C is how a server ends


@pytest.mark.parametrize("mode", MODES)
def test_an_escalation_is_put_to_the_clients_user_over_http(
    http_server: HttpServer, tmp_path: Path, mode: str
) -> None:
    url, token = http_server.started()
    spec = write(tmp_path / "split.toml", unresolved())
    asked: list[str] = []

    async def answer(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"vote": "revise", "rationale": "Roll back."})

    async def ask() -> dict[str, Any]:
        async with Client(_bearer(url, token), mode=mode, elicitation_callback=answer) as client:
            return _ok(await client.call_tool("run", {"spec": str(spec), "wait": True}))

    ran = asyncio.run(ask())
    assert len(asked) == 1 and "ended unresolved" in asked[0]
    assert ran["asked_user"] == "accepted" and ran["decided_via"] == "mcp_elicitation"
    result = load_session(ran["session"]).result
    assert result is not None and result["decision"] == "revise"
    assert verify_file(ran["session"]).ok


def test_a_run_going_when_the_server_stops_keeps_its_turns_and_resumes(
    http_server: HttpServer, tmp_path: Path
) -> None:
    url, token = http_server.started()
    spec = _slow_spec(tmp_path)

    async def start() -> Path:
        async with Client(_bearer(url, token)) as client:
            ran = _ok(await client.call_tool("run", {"spec": str(spec)}))
        assert ran["status"] == "running"
        return Path(ran["session"])

    session = asyncio.run(start())
    deadline = time.monotonic() + 60
    while not load_session(session).turns and time.monotonic() < deadline:
        time.sleep(0.05)
    assert http_server.stop() == "" and http_server.proc.returncode == 0
    stopped = load_session(session)
    assert stopped.result is None and stopped.turns  # stopped at a committed turn
    resumed = subprocess.run(
        [sys.executable, "-m", "tui", "resume", str(session), "--headless"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 3, resumed.stderr  # its lock released: it goes on, unresolved
    assert verify_file(session).ok


def test_the_guard_refuses_a_missing_or_wrong_token_a_foreign_host_or_origin(
    http_server: HttpServer,
) -> None:
    url, token = http_server.started()
    host = url.split("/")[2]
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    accept = {"Accept": "application/json, text/event-stream"}

    def post(*, params: dict[str, str] | None = None, **headers: str) -> httpx.Response:
        return httpx.post(url, json=initialize, params=params, headers={**accept, **headers})

    bearer = f"Bearer {token}"
    assert post().status_code == 403
    assert post(params={"token": "not-the-token"}).status_code == 403
    assert post(Authorization="Bearer not-the-token").status_code == 403
    assert post(Authorization=bearer, Host="moot.attacker.example").status_code == 403
    assert post(Authorization=bearer, Origin="http://attacker.example").status_code == 403
    refused = post(Authorization=bearer, Origin="http://attacker.example")
    assert "another site" in refused.text and token not in refused.text

    assert post(Authorization=bearer).status_code == 200  # the token as a header
    assert post(params={"token": token}).status_code == 200  # or in the URL
    assert (
        post(Authorization=bearer, Origin=f"http://{host}").status_code == 200
    )  # its own page's origin
    assert post(Authorization=bearer, Host=f"localhost:{http_server.port}").status_code == 200


def test_a_port_in_use_is_exit_2_and_no_url(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "tui", "mcp", "--http", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
    assert done.returncode == 2, done.stderr
    assert f"port {port} is in use" in done.stderr
    assert "http://" not in done.stdout + done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("port", ["65536", "-1"])
def test_a_port_out_of_range_is_refused_by_the_parser(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["mcp", "--http", "--port", port])
    assert exit_.value.code == 2
    assert "0 (any free one) to 65535" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--http", "--host", "0.0.0.0"], "0.0.0.0 is not a loopback address"),
        (["--port", "8123"], "--port, --host and --public serve over HTTP: add --http"),
        (["--public"], "add --http"),
    ],
)
def test_bad_http_options_are_one_line_and_exit_2(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", *args]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and "http://" not in err
