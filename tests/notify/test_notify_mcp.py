"""``moot mcp`` tells the [[notify]] targets of a run that ends awaiting a person, once its
client lets the run go: a decision the client's user gave on the spot sends nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.types import ElicitResult

from tests.batch_specs import unresolved, write
from tests.mcp.test_mcp_server import Answers, _ok
from tests.notify.test_notify import configure
from tests.notify_servers import WebhookReceiver, wait_for
from tui.mcp_server import MootServer
from tui.providers.scripted import ScriptedProvider

pytestmark = pytest.mark.xdist_group("mcp")


@pytest.fixture
def server(tmp_path: Path) -> MootServer:
    provider = ScriptedProvider()
    return MootServer(tmp_path / "sessions", lambda d: provider, allow_read=[str(tmp_path)])


async def test_a_run_left_awaiting_a_decision_posts_its_message(
    server: MootServer, tmp_path: Path
) -> None:
    with WebhookReceiver() as hook:
        configure([{"name": "team", "url": hook.url}])
        spec = write(tmp_path / "split.toml", unresolved("Split over MCP"))
        async with Client(server.mcp) as client:  # no elicitation: nobody to ask
            ran = _ok(await client.call_tool("run", {"spec": str(spec), "wait": True}))
        assert ran["status"] == "awaiting_decision"
        wait_for(lambda: hook.hooks)
    (sent,) = hook.hooks
    body = sent.json()
    assert body["session"] == Path(ran["session"]).stem and body["title"] == "Split over MCP"
    assert "via mcp" in body["asked_by"]


async def test_a_run_its_client_decided_sends_nothing(server: MootServer, tmp_path: Path) -> None:
    with WebhookReceiver() as hook:
        configure([{"name": "team", "url": hook.url}])
        spec = write(tmp_path / "split.toml", unresolved())
        answers = Answers(
            ElicitResult(action="accept", content={"vote": "revise", "rationale": "Roll back."})
        )
        async with Client(server.mcp, mode="legacy", elicitation_callback=answers) as client:
            ran = _ok(await client.call_tool("run", {"spec": str(spec), "wait": True}))
        assert ran["status"] == "decided" and ran["asked_user"] == "accepted"
        running = server.runs.get(Path(ran["session"]))
        assert running is not None and running.notifier is not None
        running.notifier.finish()  # the round, had there been one, has ended
        assert hook.hooks == []
