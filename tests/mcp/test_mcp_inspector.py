"""``moot mcp`` (stdio, and ``--http``) as the MCP Inspector's CLI sees it: a client that is
not ours.

The Inspector comes from the npm registry at the version locked in
``tests/mcp_inspector/package-lock.json``, installed there with ``npm ci``;
without ``node`` and ``npm`` on the machine the test is skipped and says why. Its CLI
runs straight from ``node_modules/.bin`` (``npx`` cost another 0.6 s of CPU a call).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.batch_specs import unresolved, write
from tests.mcp_http_server import HttpServer
from tests.npm_packages import install, missing_tools
from tui.engine.record.session import load_session

pytestmark = pytest.mark.xdist_group("mcp")  # ./dev.sh test: one worker runs the MCP servers

HERE = Path(__file__).resolve().parents[1] / "mcp_inspector"
CLI = HERE / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture(scope="module")
def inspector() -> Path:
    """The locked Inspector, installed with ``npm ci`` when the lock changed."""
    if missing := missing_tools():
        pytest.skip(
            f"{' and '.join(missing)} not on PATH: the MCP Inspector's CLI is an npm package"
        )
    install(HERE)
    return CLI


def inspect(
    inspector: Path, home: Path, target: list[str], *args: str
) -> subprocess.CompletedProcess[str]:
    """One Inspector CLI call (its own node process) against ``target``, a server command
    (stdio) or a URL and its transport flags."""
    return subprocess.run(
        [str(inspector), "--cli", *target, *args],
        cwd=HERE,
        env={**os.environ, "HOME": str(home)},  # its catalog file goes here, not in ~
        capture_output=True,
        text=True,
        timeout=180,
    )


def answer(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr[-2000:]
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def tool(inspector: Path, home: Path, target: list[str], name: str, **args: str) -> dict[str, Any]:
    pairs = [f"{key}={value}" for key, value in args.items()]
    given = ["--tool-arg", *pairs] if pairs else []
    called = answer(
        inspect(inspector, home, target, "--method", "tools/call", "--tool-name", name, *given)
    )
    assert not called.get("isError"), called
    structured: dict[str, Any] = called["structuredContent"]
    return structured


TOOLS = {"run", "status", "inbox", "decide", "verify", "export"}


def test_the_inspector_lists_the_tools_over_stdio(inspector: Path, tmp_path: Path) -> None:
    """``moot mcp`` as a stdio server the Inspector starts itself: every tool with its input
    and output schemas. (The calls below share one HTTP server: a stdio server is a new
    Python per call, about 3 s of CPU each, so the whole cycle was played over it once.)"""
    home, folder = tmp_path / "home", tmp_path / "sessions"
    home.mkdir()
    server = [sys.executable, "-m", "tui", "mcp", "--sessions-dir", str(folder)]
    # The Inspector gives a server 15 s to answer by default; `moot mcp` starting on a busy
    # machine took longer (CI: "Connection timed out after 15000 ms").
    wait_ms = ["--connect-timeout", "120000"]
    listed = answer(inspect(inspector, home, [*server, *wait_ms], "--method", "tools/list"))
    tools = {t["name"]: t for t in listed["tools"]}
    assert set(tools) == TOOLS
    assert all(t["inputSchema"]["type"] == "object" and t["outputSchema"] for t in tools.values())


def test_the_inspector_runs_an_unresolved_debate_to_a_decision_over_http(
    inspector: Path, tmp_path: Path
) -> None:
    """One ``moot mcp --http`` for the whole cycle, refused without its token. Earns its time
    (13 to 18 s in a full run): eight calls of the Inspector's CLI, a Node process each, one
    per tool the cycle needs, against the one server."""
    home = tmp_path / "home"
    home.mkdir()
    spec = write(tmp_path / "split.toml", unresolved("Split over MCP"))
    server = HttpServer(tmp_path)  # it may read beside the spec: --allow-read tmp_path
    try:
        url, token = server.started()
        target = [url, "--transport", "http", "--header", f"Authorization: Bearer {token}"]
        refused = inspect(inspector, home, [url, "--transport", "http"], "--method", "tools/list")
        listed = answer(inspect(inspector, home, target, "--method", "tools/list"))
        assert {t["name"] for t in listed["tools"]} == TOOLS

        ran = tool(inspector, home, target, "run", spec=str(spec), wait="true")
        assert ran["status"] == "awaiting_decision"
        assert ran["decision_rule"] == "max_rounds_exhausted"
        session = ran["session"]

        inbox = tool(inspector, home, target, "inbox")
        assert [e["session"] for e in inbox["sessions"]] == [session]

        decided = tool(
            inspector,
            home,
            target,
            "decide",
            session=session,
            vote="revise",
            rationale="Roll back.",
        )
        assert decided["decided_by"] == "operator" and decided["decided_via"] == "mcp"

        status = tool(inspector, home, target, "status", session=Path(session).name)
        assert status["status"] == "decided" and status["decision"] == "revise"

        verified = tool(inspector, home, target, "verify", session=session)
        assert verified["ok"] is True and verified["failures"] == []

        adr = tool(inspector, home, target, "export", session=session, format="adr")
        assert "Split over MCP" in adr["text"] and "Roll back." in adr["text"]
    finally:
        server.stop()
    assert "403" in refused.stdout + refused.stderr and "tools" not in refused.stdout
    result = load_session(session).result
    assert result is not None and result["decision"] == "revise"
