"""Getting one notice to one target: an HTTP POST or a mail, retried with backoff, bounded.

A target that is down costs a bounded wait (a few attempts, each with a timeout,
backoff between them, all within :data:`DEADLINE_S`) and never raises: the result
is a :class:`Delivery` saying sent, or failed and why. A reason never holds the
target's URL (a chat webhook's URL is its password) nor a credential.
"""

from __future__ import annotations

import os
import smtplib
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from tui.notify.messages import SIGNATURE_HEADER, Notice, mail, signature, webhook_body
from tui.notify.settings import Mail, Target, Webhook
from tui.render.textsafe import shorten

ATTEMPTS = 3
ATTEMPT_TIMEOUT_S = 5.0
BACKOFF_S = (0.5, 1.5)  # before the second and the third attempt
DEADLINE_S = 30.0  # no retry starts after this long


class _Retry(Exception):
    """This attempt failed in a way another may not (down, timed out, 5xx, 429)."""


class _Fail(Exception):
    """No attempt will do better (refused, misconfigured): stop now."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """What became of one target's message."""

    name: str
    kind: str  # "webhook" or "mail"
    sent: bool
    attempts: int
    reason: str = ""  # why it failed; empty when sent
    at: str = ""  # when the last attempt ended (UTC, ISO 8601)

    @property
    def state(self) -> str:
        return "sent" if self.sent else "failed"

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        del out["sent"]
        return {**out, "state": self.state}


def _brief(err: BaseException, *hidden: str) -> str:
    text = str(err) or type(err).__name__
    for secret in hidden:
        if secret:
            text = text.replace(secret, "[target]")
    return shorten(text, 200)


def _post(target: Webhook, body: bytes) -> None:
    import httpx

    headers = {"Content-Type": "application/json", "User-Agent": "moot-notify"}
    if target.secret_env is not None:
        secret = os.environ.get(target.secret_env)
        if not secret:
            raise _Fail(f"{target.secret_env} is not set; nothing is sent unsigned")
        headers[SIGNATURE_HEADER] = signature(secret, body)
    try:
        with httpx.Client(timeout=ATTEMPT_TIMEOUT_S, follow_redirects=False) as client:
            status = client.post(target.url, content=body, headers=headers).status_code
    except httpx.TimeoutException:
        raise _Retry("timed out") from None
    except httpx.HTTPError as err:
        raise _Retry(f"cannot connect: {_brief(err, target.url)}") from None
    if 200 <= status < 300:
        return
    if status in (408, 429) or status >= 500:
        raise _Retry(f"HTTP {status}")
    if 300 <= status < 400:
        raise _Fail(f"HTTP {status} (a redirect; moot does not follow one)")
    raise _Fail(f"HTTP {status}")


def _credentials(target: Mail) -> tuple[str, str] | None:
    if target.user_env is None or target.password_env is None:
        return None
    user, password = os.environ.get(target.user_env), os.environ.get(target.password_env)
    if not user or not password:
        unset = target.user_env if not user else target.password_env
        raise _Fail(f"{unset} is not set; no mail is sent without the login")
    return user, password


def _send_mail(target: Mail, notice: Notice) -> None:
    login = _credentials(target)
    message = mail(notice, target.sender, target.to)
    try:
        with smtplib.SMTP(target.host, target.port, timeout=ATTEMPT_TIMEOUT_S) as smtp:
            smtp.ehlo()
            if not smtp.has_extn("starttls"):
                raise _Fail("the server does not offer STARTTLS; nothing is sent in clear")
            smtp.starttls(context=ssl.create_default_context())
            smtp.ehlo()
            if login is not None:
                smtp.login(*login)
            smtp.send_message(message)
    except smtplib.SMTPAuthenticationError:
        raise _Fail("the server refused the login") from None
    except smtplib.SMTPRecipientsRefused:
        raise _Fail("the server refused the recipients") from None
    except smtplib.SMTPResponseException as err:
        reply = f"the server said {err.smtp_code}"
        raise (_Retry(reply) if 400 <= err.smtp_code < 500 else _Fail(reply)) from None
    except ssl.SSLError as err:
        raise _Fail(f"TLS failed: {_brief(err)}") from None
    except (OSError, smtplib.SMTPException) as err:
        raise _Retry(f"cannot connect: {_brief(err)}") from None


def _attempt(target: Target, notice: Notice) -> None:
    if isinstance(target, Webhook):
        _post(target, webhook_body(notice, target.format))
    else:
        _send_mail(target, notice)


def _host(target: Target) -> str:
    return target.host if isinstance(target, Mail) else urlsplit(target.url).hostname or ""


def deliver(
    target: Target, notice: Notice, *, sleep: Callable[[float], None] = time.sleep
) -> Delivery:
    """Try ``target`` up to :data:`ATTEMPTS` times; never raises."""
    kind = "mail" if isinstance(target, Mail) else "webhook"
    told = notice if target.include_text else notice.without_text()
    started = time.monotonic()
    reason = ""
    attempts = 0
    for attempts in range(1, ATTEMPTS + 1):
        try:
            _attempt(target, told)
            reason = ""
            break
        except _Fail as err:
            reason = str(err)
            break
        except _Retry as err:
            reason = str(err)
        except Exception as err:  # a bug must not stop the debate's ending
            reason = f"internal error: {type(err).__name__}: {_brief(err, _host(target))}"
            break
        if attempts < ATTEMPTS:
            pause = BACKOFF_S[attempts - 1]
            if time.monotonic() - started + pause > DEADLINE_S:
                break
            sleep(pause)
    at = datetime.now(UTC).isoformat(timespec="seconds")
    return Delivery(target.name, kind, not reason, attempts, reason, at)


def deliver_all(targets: Sequence[Target], notice: Notice) -> list[Delivery]:
    """Every target at once, each in a thread of its own; in the targets' order."""
    results: list[Delivery | None] = [None] * len(targets)

    def one(i: int) -> None:
        results[i] = deliver(targets[i], notice)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(targets))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE_S + ATTEMPTS * ATTEMPT_TIMEOUT_S * 2)
    return [
        r if r is not None else Delivery(t.name, "", False, 0, "still trying when moot stopped")
        for r, t in zip(results, targets, strict=True)
    ]
