"""``moot mcp`` (stdio, and ``--http``) as the MCP Inspector's CLI sees it: a client that is
not ours.

The Inspector comes from the npm registry at the version locked in
``tests/mcp_inspector/package-lock.json``, installed there with ``npm ci``;
without ``npx`` on the machine the test is skipped and says why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.batch_specs import unresolved, write
from tests.mcp_http_server import HttpServer
from tui.engine.record.session import load_session

pytestmark = pytest.mark.xdist_group("mcp")  # ./dev.sh test: one worker runs the MCP servers

HERE = Path(__file__).resolve().parents[1] / "mcp_inspector"
CLI = HERE / "node_modules" / ".bin" / "mcp-inspector"
INSTALLED = HERE / "node_modules" / ".package-lock.json"


@pytest.fixture(scope="module")
def inspector() -> Path:
    """The locked Inspector, installed with ``npm ci`` when the lock is newer than the install."""
    if shutil.which("npx") is None or shutil.which("npm") is None:
        pytest.skip("npx is not installed: the MCP Inspector's CLI is an npm package")
    lock = HERE / "package-lock.json"
    if not INSTALLED.exists() or INSTALLED.stat().st_mtime < lock.stat().st_mtime:
        done = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=HERE,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"npm ci in {HERE} failed:\n{done.stderr[-2000:]}"
    return CLI


def call(inspector: Path, home: Path, folder: Path, *args: str) -> dict[str, Any]:
    """One Inspector CLI call against a fresh ``moot mcp``; its JSON answer."""
    allowed = ["--allow-read", str(folder.parent)]  # the spec lies beside the sessions folder
    server = [sys.executable, "-m", "tui", "mcp", "--sessions-dir", str(folder), *allowed]
    # The Inspector gives a server 15 s to answer by default; `moot mcp` starting on a busy
    # machine took longer (CI: "Connection timed out after 15000 ms").
    wait_ms = ["--connect-timeout", "120000"]
    done = subprocess.run(
        ["npx", "--no-install", "mcp-inspector", "--cli", *server, *wait_ms, *args],
        cwd=HERE,
        env={**os.environ, "HOME": str(home)},  # its catalog file goes here, not in ~
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def tool(inspector: Path, home: Path, folder: Path, name: str, **args: str) -> dict[str, Any]:
    pairs = [f"{key}={value}" for key, value in args.items()]
    given = ["--tool-arg", *pairs] if pairs else []
    answer = call(inspector, home, folder, "--method", "tools/call", "--tool-name", name, *given)
    assert not answer.get("isError"), answer
    structured: dict[str, Any] = answer["structuredContent"]
    return structured


def test_the_inspector_runs_an_unresolved_debate_to_a_decision(
    inspector: Path, tmp_path: Path
) -> None:
    home, folder = tmp_path / "home", tmp_path / "sessions"
    home.mkdir()
    spec = write(tmp_path / "split.toml", unresolved("Split over MCP"))

    listed = call(inspector, home, folder, "--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}
    assert set(tools) == {"run", "status", "inbox", "decide", "verify", "export"}
    assert all(t["inputSchema"]["type"] == "object" and t["outputSchema"] for t in tools.values())

    ran = tool(inspector, home, folder, "run", spec=str(spec), wait="true")
    assert ran["status"] == "awaiting_decision" and ran["decision_rule"] == "max_rounds_exhausted"
    session = ran["session"]

    inbox = tool(inspector, home, folder, "inbox")
    assert [e["session"] for e in inbox["sessions"]] == [session]

    decided = tool(
        inspector, home, folder, "decide", session=session, vote="revise", rationale="Roll back."
    )
    assert decided["decided_by"] == "operator" and decided["decided_via"] == "mcp"

    status = tool(inspector, home, folder, "status", session=Path(session).name)
    assert status["status"] == "decided" and status["decision"] == "revise"

    verified = tool(inspector, home, folder, "verify", session=session)
    assert verified["ok"] is True and verified["failures"] == []

    adr = tool(inspector, home, folder, "export", session=session, format="adr")
    assert "Split over MCP" in adr["text"] and "Roll back." in adr["text"]
    result = load_session(session).result
    assert result is not None and result["decision"] == "revise"


def test_the_inspector_lists_the_tools_over_http_with_the_token(
    inspector: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    server = HttpServer(tmp_path)
    try:
        url, token = server.started()

        def inspect(*headers: str) -> subprocess.CompletedProcess[str]:
            given = [arg for header in headers for arg in ("--header", header)]
            return subprocess.run(
                ["npx", "--no-install", "mcp-inspector", "--cli", url, "--transport", "http"]
                + [*given, "--method", "tools/list"],
                cwd=HERE,
                env={**os.environ, "HOME": str(home)},
                capture_output=True,
                text=True,
                timeout=180,
            )

        listed = inspect(f"Authorization: Bearer {token}")
        refused = inspect()
    finally:
        server.stop()
    assert listed.returncode == 0, listed.stderr[-2000:]
    tools = {t["name"] for t in json.loads(listed.stdout)["tools"]}
    assert tools == {"run", "status", "inbox", "decide", "verify", "export"}
    assert "403" in refused.stdout + refused.stderr and "tools" not in refused.stdout
