"""``moot notify SESSION``: the message for a session awaiting a person, sent again.

Unlike a run's own round, every refusal here is the command's answer (exit 2): a
config file with problems, no target, a session that awaits nobody.
"""

from __future__ import annotations

from pathlib import Path

from tui.config import ConfigRefused, config_path, read_config
from tui.engine.basics.errors import MootInputError
from tui.notify.deliver import Delivery
from tui.notify.send import send
from tui.notify.settings import from_config

NOT_AWAITING = "does not await a decision (decided, running or interrupted); nothing was sent"


def resend(path: Path) -> tuple[list[Delivery], list[str]]:
    """Each target's delivery, and any problem with the decide link; MootInputError refuses."""
    if not path.is_file():
        raise MootInputError(str(path), ["no such session file"])
    where = str(config_path())
    try:
        config = read_config()
    except ConfigRefused as err:
        raise MootInputError(where, [str(err)]) from None
    found, problems = from_config(config)
    if problems:
        raise MootInputError(where, problems)
    if not found.targets:
        raise MootInputError(where, ["no [[notify]] targets: add a url or an email target"])
    sent = send(path, found, via="moot notify")
    if sent is None:
        raise MootInputError(str(path), [NOT_AWAITING])
    return sent
