"""Notify: a person hears when a debate ends awaiting them, by webhook or mail.

On only when the person's own config file names ``[[notify]]`` targets
(``tui.notify.settings``). :func:`notify_session` is an engine listener like the
tracer: the first time the run ends ``escalate`` (unresolved, escalated by rule,
or deferred by the operator), after the result is saved, a thread sends one
message per target (``send``: the inbox's rule decides whether it still awaits a
person) and records what became of each beside the session (``record``). A target
that is down is one warning line, never the debate's failure or a long wait.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from tui.config import ConfigRefused, config_path, read_config
from tui.engine.basics.vocab import ESCALATE
from tui.engine.run.events import DecisionReached, Event
from tui.notify.settings import NotifySettings, from_config

if TYPE_CHECKING:
    from tui.engine.record.live import LiveSession

Warn = Callable[[str], None]
Finish = Callable[[], None]
_said: set[str] = set()


def stderr_once(message: str) -> None:
    """Each warning once per process (a batch of a thousand debates says a bad config once)."""
    if message not in _said:
        _said.add(message)
        print(message, file=sys.stderr)


def settings(warn: Warn = stderr_once) -> NotifySettings | None:
    """The targets in force, None when there are none; a bad config file is one warning."""
    path = config_path()
    try:
        config = read_config()
    except ConfigRefused as err:
        warn(f"moot: warning: {err}; no notifications are sent")
        return None
    found, problems = from_config(config)
    if problems:
        listed = "; ".join(problems)
        warn(f"moot: warning: {path}: {listed}; no notifications are sent until fixed")
        return None
    return found if found.targets else None


class Notifier:
    """Sends once, from a thread of its own, when the run ends awaiting a person.

    Subscribed to the engine it fires at the first ``escalate``; a front end that may
    still ask a person itself (``moot mcp``'s run with wait) calls :meth:`fire` when
    it lets the run go instead.
    """

    def __init__(self, session: LiveSession, found: NotifySettings, via: str, warn: Warn) -> None:
        self._path = session.path
        self._found = found
        self._via = via
        self._warn = warn
        self._thread: threading.Thread | None = None

    def __call__(self, event: Event) -> None:
        # The session subscribed first, so the result is in the file by now.
        if isinstance(event, DecisionReached) and event.decision == ESCALATE:
            self.fire()

    def fire(self) -> None:
        """Send, once, if the saved file awaits a person (the inbox's rule, asked in the thread)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._send, name="moot-notify")
            self._thread.start()

    def _send(self) -> None:
        from tui.notify.send import failure_line, send

        sent = send(self._path, self._found, via=self._via)
        if sent is None:
            return
        deliveries, problems = sent
        for problem in problems:
            self._warn(f"moot: warning: notify: {problem}; the message has no decide link")
        line = failure_line(self._path, deliveries)
        if line is not None:
            self._warn(line)

    def finish(self) -> None:
        """Wait for the messages under way (each bounded by the delivery's deadline)."""
        if self._thread is not None:
            self._thread.join()


def notifier(session: LiveSession, via: str, warn: Warn = stderr_once) -> Notifier | None:
    """A notifier for ``session``, None when no target is configured.

    ``via`` names the front end in the message (console, headless, batch, mcp).
    """
    found = settings(warn)
    return None if found is None else Notifier(session, found, via, warn)


def notify_session(session: LiveSession, via: str, warn: Warn = stderr_once) -> Finish | None:
    """Send when ``session`` first ends ``escalate`` and awaits a person; None when no target
    is configured. Call the result before the process ends, off the event loop."""
    found = notifier(session, via, warn)
    if found is None:
        return None
    session.engine.subscribe(found)
    return found.finish
