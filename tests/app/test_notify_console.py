"""The console tells the [[notify]] targets when its debate ends awaiting a person."""

from __future__ import annotations

from tests.app.app_support import debate_spec, make_app, session_file, wait_until, write_spec
from tests.notify.test_notify import closed_port, configure
from tests.notify_servers import WebhookReceiver


async def test_a_console_debate_that_escalates_posts_its_message(tmp_path, moot_dirs):
    with WebhookReceiver() as hook:
        configure([{"name": "team", "url": hook.url}], base_url="https://moot.example")
        spec = debate_spec(debaters=3)  # release, revise, escalate: no consensus, escalated
        app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)))
        async with app.run_test(size=(160, 45)) as pilot:
            screen = await wait_until(pilot, lambda: app.debate_screen())
            await wait_until(pilot, lambda: screen.decision is not None)
            await wait_until(pilot, lambda: hook.hooks, timeout=60)
            await pilot.press("q")
    session = session_file(moot_dirs)
    (sent,) = hook.hooks
    body = sent.json()
    assert body["session"] == session.stem and body["event"] == "awaiting_decision"
    assert "via console" in body["asked_by"]
    assert body["decide_url"].startswith(f"https://moot.example/decide/{session.stem}?token=")


async def test_a_target_that_is_down_is_one_toast_in_the_console(tmp_path, moot_dirs):
    configure([{"name": "team", "url": f"http://127.0.0.1:{closed_port()}/hook"}])
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, debate_spec(debaters=3))))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: screen.decision is not None)

        def warned() -> list[str]:
            return [str(n.message) for n in app._notifications if "notify" in str(n.message)]

        (toast,) = await wait_until(pilot, warned, timeout=60)
        await pilot.press("q")
    assert "team failed after 3 attempts" in toast
    assert screen.exit_code() == 3  # the debate's own ending
