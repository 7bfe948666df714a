"""Notify: a debate that ends awaiting a person reaches them by webhook or mail, with a
decide link; a target that is down never changes how the debate ends."""

from __future__ import annotations

import email
import email.message
import email.policy
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import tomli_w

from tests.batch_specs import decided, unresolved, write
from tests.notify_servers import MailServer, WebhookReceiver
from tui.commands.decide_links import token_valid
from tui.notify.messages import Notice, discord_body, slack_body, teams_body
from tui.notify.settings import Mail, Webhook, from_config

BASE = "https://moot.example:8000"
SECRET_ENV = "MOOT_TEST_NOTIFY_SECRET"
SECRET = "a-shared-secret-for-the-hook"
MOTION_WORDS = "the nightly batch window"  # in the motion: it must not leave without include_text


def configure(targets: list[dict[str, Any]], **links: str) -> None:
    config = Path(os.environ["MOOT_CONFIG_DIR"]) / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    doc: dict[str, Any] = {"notify": targets}
    if links:
        doc["links"] = links
    config.write_text(tomli_w.dumps(doc), encoding="utf-8")


def moot(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, **env},
    )


def split_spec(tmp_path: Path, title: str = "Ship the billing migration") -> Path:
    raw = unresolved(title)
    raw["debate"]["motion"] = f"Move {MOTION_WORDS} to 02:00 and ship the migration."
    return write(tmp_path / "specs" / "split.toml", raw)


def only_session(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "sessions").glob("*.toml")
    return found


def inbox(tmp_path: Path) -> list[dict[str, Any]]:
    done = moot("inbox", "--json", "--sessions-dir", str(tmp_path / "sessions"))
    assert done.returncode == 0, done.stderr
    listed: list[dict[str, Any]] = json.loads(done.stdout)
    return listed


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_headless_run_that_ends_unresolved_posts_one_signed_message(tmp_path: Path) -> None:
    with WebhookReceiver(secret=SECRET) as hook:
        configure([{"name": "team", "url": hook.url, "secret_env": SECRET_ENV}], base_url=BASE)
        done = moot(
            "run", str(split_spec(tmp_path)), "--headless", "--no-preflight", **{SECRET_ENV: SECRET}
        )
        assert done.returncode == 3, done.stderr  # unresolved, as without notify
        assert "warning" not in done.stderr and "Traceback" not in done.stderr
        session = only_session(tmp_path)
        assert len(hook.hooks) == 1  # the run has ended: every delivery is done
        (sent,) = hook.hooks
    assert sent.signed_ok, sent.headers
    assert sent.path == "/hooks/team"
    body = sent.json()
    assert body["event"] == "awaiting_decision"
    assert body["session"] == session.stem
    assert Path(body["path"]).resolve() == session.resolve()
    assert body["title"] == "Ship the billing migration"
    assert body["rule"] == "max_rounds_exhausted" and body["deferred"] is False
    assert body["tally"] == {"release": 1, "revise": 1, "escalate": 0}
    assert body["protocol"] == "debate" and "via headless" in body["asked_by"]
    link = urlsplit(body["decide_url"])
    assert f"{link.scheme}://{link.netloc}" == BASE
    assert link.path == f"/decide/{session.stem}"
    token = parse_qs(link.query)["token"][0]
    assert token_valid(session.stem, token) and not token_valid("another-session", token)
    assert MOTION_WORDS not in sent.body.decode() and "motion" not in body  # no text unasked
    assert SECRET not in sent.body.decode()
    (state,) = inbox(tmp_path)
    (team,) = state["notify"]
    assert team.pop("at")  # when the last attempt ended
    assert team == {"name": "team", "kind": "webhook", "state": "sent", "attempts": 1, "reason": ""}


def test_a_decided_run_sends_nothing(tmp_path: Path) -> None:
    with WebhookReceiver() as hook:
        configure([{"name": "team", "url": hook.url}])
        spec = write(tmp_path / "specs" / "ok.toml", decided())
        done = moot("run", str(spec), "--headless", "--no-preflight")
        assert done.returncode == 0, done.stderr
        assert hook.hooks == []  # the process has ended: nothing is still on its way


def test_a_target_that_is_down_is_one_warning_and_moot_notify_sends_again(
    tmp_path: Path,
) -> None:
    configure([{"name": "team", "url": f"http://127.0.0.1:{closed_port()}/hook"}], base_url=BASE)
    done = moot("run", str(split_spec(tmp_path)), "--headless", "--no-preflight")
    assert done.returncode == 3, done.stderr  # the debate's own exit code
    assert "Traceback" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if "notify" in line]
    assert len(warnings) == 1, done.stderr
    session = only_session(tmp_path)
    assert "team failed after 3 attempts (cannot connect" in warnings[0]
    assert f"moot notify {session}" in warnings[0]
    (state,) = inbox(tmp_path)
    (team,) = state["notify"]
    assert team["state"] == "failed" and team["attempts"] == 3
    assert team["reason"].startswith("cannot connect")
    plain = moot("inbox", "--sessions-dir", str(tmp_path / "sessions"))
    assert "notify: team failed (cannot connect" in plain.stdout

    with WebhookReceiver() as hook:
        configure([{"name": "team", "url": hook.url}], base_url=BASE)
        again = moot("notify", str(session))
        assert again.returncode == 0, again.stderr
        assert "team: sent" in again.stdout
        (sent,) = hook.hooks
    assert sent.json()["session"] == session.stem
    (state,) = inbox(tmp_path)
    assert [t["state"] for t in state["notify"]] == ["sent"]


def test_moot_notify_refuses_what_awaits_nobody_and_a_config_without_targets(
    tmp_path: Path,
) -> None:
    spec = write(tmp_path / "specs" / "ok.toml", decided())
    assert moot("run", str(spec), "--headless", "--no-preflight").returncode == 0
    session = only_session(tmp_path)
    with WebhookReceiver() as hook:
        configure([{"name": "team", "url": hook.url}])
        done = moot("notify", str(session))
        assert done.returncode == 2
        assert "does not await a decision" in done.stderr and "Traceback" not in done.stderr
        assert hook.hooks == []
    configure([])
    none = moot("notify", str(session))
    assert none.returncode == 2 and "no [[notify]] targets" in none.stderr
    configure([{"name": "team", "url": "http://hooks.example.com/x", "format": "xml"}])
    bad = moot("notify", str(session))
    assert bad.returncode == 2
    assert "notify[0].url: must be https://" in bad.stderr
    assert "notify[0].format: must be one of json, slack, teams, discord" in bad.stderr
    assert "hooks.example.com" not in bad.stderr  # a hook's URL is its password


def test_a_batch_that_escalates_mails_the_link_over_starttls(tmp_path: Path) -> None:
    with MailServer(tmp_path, "moot-bot", "mail-password-1") as server:
        configure(
            [
                {
                    "name": "on-call",
                    "email": "oncall@example.com",
                    "smtp": f"127.0.0.1:{server.port}",
                    "from": "moot@example.com",
                    "user_env": "MOOT_TEST_SMTP_USER",
                    "password_env": "MOOT_TEST_SMTP_PASSWORD",
                }
            ],
            base_url=BASE,
        )
        spec = split_spec(tmp_path)
        write(tmp_path / "specs" / "ok.toml", decided())
        done = moot(
            "batch",
            str(tmp_path / "specs"),
            "--no-preflight",
            "--sessions-dir",
            str(tmp_path / "sessions"),
            SSL_CERT_FILE=str(server.cert),  # the test's own CA, as a company's would be
            MOOT_TEST_SMTP_USER="moot-bot",
            MOOT_TEST_SMTP_PASSWORD="mail-password-1",
        )
        assert done.returncode == 3, done.stderr
        assert "warning" not in done.stderr, done.stderr
        assert server.logins == [(b"moot-bot", b"mail-password-1")]
        (mail,) = server.mails  # the decided debate sends nothing
    assert spec.exists()
    escalated = next(p for p in (tmp_path / "sessions").glob("*.toml") if "billing" in p.name)
    assert mail.rcpt_tos == ["oncall@example.com"] and mail.mail_from == "moot@example.com"
    assert isinstance(mail.content, bytes)
    message = email.message_from_bytes(mail.content, policy=email.policy.default)
    assert message["Subject"] == "moot: awaiting your decision: Ship the billing migration"
    assert isinstance(message, email.message.EmailMessage)
    text = message.get_content()  # as a mail client shows it (quoted-printable decoded)
    (link,) = [line for line in text.splitlines() if line.startswith("Decide: ")]
    assert link.startswith(f"Decide: {BASE}/decide/{escalated.stem}?token=")
    assert token_valid(escalated.stem, parse_qs(urlsplit(link).query)["token"][0])
    assert "stopped by: max_rounds_exhausted" in text
    assert "tally: release 1, revise 1, escalate 0" in text
    assert "via batch" in text
    assert MOTION_WORDS not in text and "mail-password-1" not in text


def test_include_text_sends_the_motion_and_stances_to_that_target_alone(tmp_path: Path) -> None:
    with WebhookReceiver() as plain, WebhookReceiver() as wordy:
        configure(
            [
                {"name": "plain", "url": plain.url},
                {"name": "wordy", "url": wordy.url, "include_text": True},
            ]
        )
        done = moot("run", str(split_spec(tmp_path)), "--headless", "--no-preflight")
        assert done.returncode == 3, done.stderr
        (bare,) = plain.hooks
        (full,) = wordy.hooks
    assert MOTION_WORDS not in bare.body.decode() and bare.json()["decide_url"] is None
    body = full.json()
    assert MOTION_WORDS in body["motion"]
    assert set(body["stances"]) == {"a", "b"} and all(body["stances"].values())


def test_config_problems_by_key_path() -> None:
    found, problems = from_config(
        {
            "notify": [
                {"name": "team", "url": "ftp://x", "secret_env": "not a name"},
                {"name": "mail", "email": "nobody", "smtp": "host:99999"},
                {"url": "https://a.example", "email": "a@b.example", "name": "both"},
                {"name": "team", "url": "https://hooks.example/1", "colour": "red"},
                {"name": "m2", "email": "a@b.example", "smtp": "h", "from": "f@h", "user_env": "U"},
            ],
            "links": {"base_url": "https://moot.example/?x=1"},
        }
    )
    assert found.targets == ()
    assert problems == [
        "notify[0].url: must be an https:// URL with a host",
        "notify[0].secret_env: must name an environment variable (letters, digits, _)",
        "notify[1].email: not a mail address: 'nobody'",
        "notify[1].smtp: the port must be 1 to 65535",
        "notify[1].from: must be an address or a list of addresses",
        "notify[2]: give url (a webhook) or email (mail), one of them",
        "notify[3].colour: unknown key (known: name, url, format, secret_env, include_text)",
        "notify[4]: give user_env and password_env together, or neither",
        "notify: the name 'team' is given to more than one target",
        "links.base_url: must not hold a query or a fragment",
    ]
    good, none = from_config(
        {
            "notify": [
                {"name": "team", "url": "https://hooks.example/1", "format": "slack"},
                {"name": "mail", "email": ["a@b.example"], "smtp": "smtp.example", "from": "m@b.c"},
            ],
            "links": {"base_url": BASE},
        }
    )
    assert none == [] and good.base_url == BASE
    assert good.targets == (
        Webhook("team", "https://hooks.example/1", "slack"),
        Mail("mail", ("a@b.example",), "smtp.example", 587, "m@b.c"),
    )


def _notice(title: str) -> Notice:
    return Notice(
        session="s1",
        path="/tmp/s1.toml",
        title=title,
        protocol="debate",
        rule="max_rounds_exhausted",
        deferred=False,
        tally={"release": 1},
        turns=2,
        asked_by="me@host via headless",
        decide_url=f"{BASE}/decide/s1?token=1.ab",
    )


def test_chat_formats_carry_a_link_and_no_markup_from_the_title() -> None:
    notice = _notice("<!channel> ship it <https://evil.example|here> @everyone")
    slack = slack_body(notice)
    shown = json.dumps(slack)
    assert "<!channel>" not in shown and "<https://evil" not in shown
    assert "&lt;!channel&gt;" in slack["text"]
    (button,) = slack["blocks"][-1]["elements"]
    assert button["type"] == "button" and button["url"] == notice.decide_url
    teams = teams_body(notice)["attachments"][0]["content"]
    assert teams["type"] == "AdaptiveCard"
    assert teams["actions"] == [
        {"type": "Action.OpenUrl", "title": "Decide", "url": notice.decide_url}
    ]
    assert "\\<https" in teams["body"][0]["text"]  # Markdown's link syntax escaped
    discord = discord_body(notice)
    assert discord["allowed_mentions"] == {"parse": []}  # @everyone pings nobody
    assert discord["embeds"][0]["url"] == notice.decide_url


def test_a_config_with_a_mistake_is_one_warning_and_the_run_ends_as_its_own(
    tmp_path: Path,
) -> None:
    with WebhookReceiver() as hook:
        configure([{"name": "team", "url": hook.url, "format": "xml"}])
        done = moot("run", str(split_spec(tmp_path)), "--headless", "--no-preflight")
        assert done.returncode == 3, done.stderr
        (warning,) = [line for line in done.stderr.splitlines() if "notify" in line]
        assert "notify[0].format: must be one of json, slack, teams, discord" in warning
        assert "no notifications are sent until fixed" in warning
        assert hook.hooks == []  # the run has ended: nothing is on its way
