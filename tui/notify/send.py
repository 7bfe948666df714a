"""One round of messages for one session awaiting a person: build, deliver, record.

Whether a session awaits a person is the inbox's rule (:func:`tui.commands.inbox.peek`),
read from the saved file, so a message goes out only for what ``moot inbox`` lists.
"""

from __future__ import annotations

from pathlib import Path

from tui.commands.decide_links import decide_url
from tui.commands.inbox import Awaiting, peek
from tui.engine.basics.errors import MootInputError, SessionError
from tui.notify import record
from tui.notify.deliver import Delivery, deliver_all
from tui.notify.messages import Notice
from tui.notify.settings import NotifySettings
from tui.render.textsafe import bound, clean_line

STANCE_CHARS = 1000


def _text(path: Path) -> tuple[str | None, dict[str, str]]:
    """The motion and each debater's latest stance, for a target that asks for text."""
    from tui.engine.record.session import load_session
    from tui.render.present import present

    try:
        data = load_session(path)
    except SessionError:
        return None, {}
    latest = {t.speaker: t for t in data.turns if not t.invalid}
    stances = {
        who: bound(" ".join(s.text for s in present(turn) if s.text), STANCE_CHARS)
        for who, turn in latest.items()
    }
    return data.spec.debate.motion, stances


def notice_for(
    waiting: Awaiting, found: NotifySettings, *, asked_by: str
) -> tuple[Notice, list[str]]:
    """The notice for ``waiting`` and any problem minting its decide link (then it has none)."""
    problems: list[str] = []
    link = None
    if found.base_url is not None:
        try:
            link = decide_url(found.base_url, waiting.path.stem)
        except MootInputError as err:
            problems = [f"{err.source}: {p}" for p in err.problems]
    motion: str | None = None
    stances: dict[str, str] = {}
    if any(t.include_text for t in found.targets):
        motion, stances = _text(waiting.path)
    notice = Notice.of(waiting, asked_by=asked_by, decide_url=link, motion=motion, stances=stances)
    return notice, problems


def send(path: Path, found: NotifySettings, *, via: str) -> tuple[list[Delivery], list[str]] | None:
    """Tell every target of ``path``, recording what became of each; None: it awaits nobody."""
    from tui.engine.record.keys import owner

    waiting = peek(path)
    if waiting is None:
        return None
    notice, problems = notice_for(waiting, found, asked_by=f"{owner()} via {via}")
    deliveries = deliver_all(found.targets, notice)
    record.write(path, deliveries)
    return deliveries, problems


def failure_line(path: Path, deliveries: list[Delivery]) -> str | None:
    """The one warning a failed round is worth, or None when every target took it."""
    failed = [d for d in deliveries if not d.sent]
    if not failed:
        return None
    each = "; ".join(
        f"{d.name} failed after {d.attempts} attempt{'s' if d.attempts != 1 else ''} ({d.reason})"
        for d in failed
    )
    return clean_line(f"moot: warning: notify: {each}; `moot notify {path}` tries again")
