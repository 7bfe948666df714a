"""One debate awaiting a person, as each target takes it: JSON, Slack, Teams, Discord, mail.

What leaves the machine is :class:`Notice` and nothing else: the title, protocol,
rule, tally, who asked, the session's id and path, and the decide link. The motion
and each debater's latest stance go only to a target whose config says
``include_text = true``. Every string has passed the redactor; text bound for a
chat service is escaped for its markup, so a title cannot ping a channel or fake
a link.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

from tui.commands.inbox import Awaiting, tally_text
from tui.engine.basics.redact import redact
from tui.render.textsafe import clean, clean_line, md_inline

EVENT = "awaiting_decision"
SIGNATURE_HEADER = "X-Moot-Signature-256"


@dataclass(frozen=True, slots=True)
class Notice:
    """What a target is told of one session awaiting a person."""

    session: str  # the session's id: its file name's stem
    path: str
    title: str
    protocol: str
    rule: str
    deferred: bool
    tally: dict[str, int]
    turns: int
    asked_by: str
    decide_url: str | None
    motion: str | None = None  # with include_text only
    stances: dict[str, str] = field(default_factory=dict)  # with include_text only

    @classmethod
    def of(
        cls,
        waiting: Awaiting,
        *,
        asked_by: str,
        decide_url: str | None,
        motion: str | None = None,
        stances: dict[str, str] | None = None,
    ) -> Notice:
        return cls(
            session=waiting.path.stem,
            path=str(waiting.path),
            title=redact(waiting.title),
            protocol=waiting.protocol,
            rule=waiting.decision_rule,
            deferred=waiting.deferred,
            tally=dict(waiting.vote_tally),
            turns=waiting.turns,
            asked_by=asked_by,
            decide_url=decide_url,
            motion=redact(motion) if motion is not None else None,
            stances={k: redact(v) for k, v in (stances or {}).items()},
        )

    def without_text(self) -> Notice:
        return Notice(
            self.session,
            self.path,
            self.title,
            self.protocol,
            self.rule,
            self.deferred,
            self.tally,
            self.turns,
            self.asked_by,
            self.decide_url,
        )

    @property
    def why(self) -> str:
        return "deferred by the operator" if self.deferred else self.rule

    def lines(self) -> list[str]:
        """The facts, one per line, as plain text (each line already one line)."""
        out = [
            f"protocol: {self.protocol}",
            f"stopped by: {self.why}",
            f"tally: {tally_text(self.tally)}",
            f"asked by: {self.asked_by}",
            f"session: {self.path}",
        ]
        return [clean_line(line) for line in out]


def json_body(notice: Notice) -> dict[str, Any]:
    body: dict[str, Any] = {
        "event": EVENT,
        "session": notice.session,
        "path": notice.path,
        "title": notice.title,
        "protocol": notice.protocol,
        "rule": notice.rule,
        "deferred": notice.deferred,
        "tally": notice.tally,
        "turns": notice.turns,
        "asked_by": notice.asked_by,
        "decide_url": notice.decide_url,
    }
    if notice.motion is not None:
        body["motion"] = notice.motion
        body["stances"] = notice.stances
    return body


def _slack_escape(text: str) -> str:
    """mrkdwn's three control characters: no <!channel>, no <url|fake> link from a title."""
    return clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _text_parts(notice: Notice, escape: Any) -> list[str]:
    parts = [escape(line) for line in notice.lines()]
    if notice.motion is not None:
        parts.append(escape(f"motion: {notice.motion}"))
        parts += [escape(f"{who}: {stance}") for who, stance in notice.stances.items()]
    return parts


def slack_body(notice: Notice) -> dict[str, Any]:
    heading = f"Awaiting your decision: {_slack_escape(clean_line(notice.title))}"
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"*{heading}*"}},
        {
            "type": "section",
            "text": {"type": "mrkdwn", "text": "\n".join(_text_parts(notice, _slack_escape))},
        },
    ]
    if notice.decide_url:
        button = {"type": "plain_text", "text": "Decide"}
        blocks.append(
            {
                "type": "actions",
                "elements": [{"type": "button", "text": button, "url": notice.decide_url}],
            }
        )
    return {"text": heading, "blocks": blocks}


def teams_body(notice: Notice) -> dict[str, Any]:
    """An Adaptive Card, as a Teams incoming webhook (or Workflows) takes it."""
    card: dict[str, Any] = {
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": [
            {
                "type": "TextBlock",
                "text": f"Awaiting your decision: {md_inline(notice.title)}",
                "weight": "Bolder",
                "wrap": True,
            },
            *(
                {"type": "TextBlock", "text": md_inline(part), "wrap": True}
                for part in _text_parts(notice, str)
            ),
        ],
    }
    if notice.decide_url:
        card["actions"] = [{"type": "Action.OpenUrl", "title": "Decide", "url": notice.decide_url}]
    attachment = {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}
    return {"type": "message", "attachments": [attachment]}


def discord_body(notice: Notice) -> dict[str, Any]:
    embed: dict[str, Any] = {
        "title": clean_line(notice.title)[:256],
        "description": "\n".join(md_inline(part) for part in _text_parts(notice, str))[:4000],
    }
    if notice.decide_url:
        embed["url"] = notice.decide_url
    return {
        "content": "Awaiting your decision"
        + (f": {notice.decide_url}" if notice.decide_url else ""),
        "embeds": [embed],
        "allowed_mentions": {"parse": []},  # a title naming @everyone pings nobody
    }


BODIES = {"json": json_body, "slack": slack_body, "teams": teams_body, "discord": discord_body}


def webhook_body(notice: Notice, fmt: str) -> bytes:
    return json.dumps(BODIES[fmt](notice), ensure_ascii=True).encode()


def signature(secret: str, body: bytes) -> str:
    """The header's value: ``sha256=`` and the hex HMAC-SHA256 of the body as sent."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def mail(notice: Notice, sender: str, to: tuple[str, ...]) -> EmailMessage:
    message = EmailMessage()
    message["Subject"] = f"moot: awaiting your decision: {clean_line(notice.title)[:150]}"
    message["From"] = sender
    message["To"] = ", ".join(to)
    lines = [clean_line(notice.title), "", *notice.lines()]
    if notice.decide_url:
        lines += ["", f"Decide: {notice.decide_url}"]
    else:
        lines += ["", f"Decide with: moot decide {notice.path} --vote VOTE --rationale WHY"]
    if notice.motion is not None:
        lines += ["", clean(f"Motion: {notice.motion}")]
        lines += [clean(f"{who}: {stance}") for who, stance in notice.stances.items()]
    message.set_content("\n".join(lines) + "\n")
    return message
