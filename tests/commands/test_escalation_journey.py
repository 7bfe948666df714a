"""A person's whole escalation, as they would meet it: a batch escalates, the team's webhook
gets the signed message with its decide link, the link is opened on ``moot serve`` and the
decision is made on the page; ``moot verify`` holds and the inbox is empty.

Every piece is real and on loopback: ``moot batch`` and ``moot serve`` in processes of their
own, a webhook receiver checking the signature, and the page read and posted as a browser
does (its form token, its own Origin). The page in a real Chromium is in test_decide_web.py.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.batch_specs import decided, write
from tests.commands.test_decide_web import served  # noqa: F401  (the fixture: moot serve on a port)
from tests.notify.test_notify import SECRET, SECRET_ENV, configure, inbox, moot, split_spec
from tests.notify_servers import WebhookReceiver
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file


def test_a_batch_escalates_the_message_arrives_and_the_link_decides_it(
    tmp_path: Path,
    served: int,  # noqa: F811
) -> None:
    base = f"http://127.0.0.1:{served}"
    with WebhookReceiver(secret=SECRET) as hook:
        configure([{"name": "team", "url": hook.url, "secret_env": SECRET_ENV}], base_url=base)
        split_spec(tmp_path)
        write(tmp_path / "specs" / "ok.toml", decided())
        done = moot(
            "batch",
            str(tmp_path / "specs"),
            "--no-preflight",
            "--sessions-dir",
            str(tmp_path / "sessions"),  # the folder moot serve reads (conftest)
            **{SECRET_ENV: SECRET},
        )
        assert done.returncode == 3, done.stderr  # one escalated, one decided
        (message,) = hook.hooks  # the decided debate sends nothing
    assert message.signed_ok, message.headers
    body = message.json()
    assert body["event"] == "awaiting_decision" and body["title"] == "Ship the billing migration"
    session = Path(body["path"])
    (listed,) = inbox(tmp_path)
    assert listed["notify"][0]["state"] == "sent"

    link = body["decide_url"]
    assert link.startswith(f"{base}/decide/{session.stem}?token=")
    with httpx.Client(follow_redirects=False, timeout=30) as browser:
        page = browser.get(link)
        assert page.status_code == 200, page.text
        assert "Ship the billing migration" in page.text
        action = re.search(r'<form method="post" action="([^"]+)"', page.text)
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert action is not None and csrf is not None, page.text
        target = urlsplit(html.unescape(action.group(1)))
        posted = browser.post(
            f"{base}{target.path}?{target.query}",
            data={
                "csrf": csrf.group(1),
                "vote": "revise",
                "rationale": "Roll back first; the risk is not named.",
            },
            headers={"Origin": base},
        )
        assert posted.status_code == 200, posted.text
        assert "Decided: revise" in posted.text
        again = browser.get(link)
        assert again.status_code == 403  # a link decides once

    result = load_session(session).result
    assert result is not None and result["decision"] == "revise"
    assert result["decided_by"] == "operator" and result["decided_via"] == "web"
    assert verify_file(session).ok
    assert inbox(tmp_path) == []
