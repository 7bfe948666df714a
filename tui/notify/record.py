"""Whether each target got a session's message: a small JSON file beside the session.

``.<session>.notify.json`` in the session's folder, outside the signed session file
(nothing in it is a claim about the debate), read by ``moot inbox`` and rewritten
by each round of messages (``moot notify`` included). A damaged or planted file
reads as nothing recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from tui.engine.basics.safeio import FileRefused, read_regular, replace_file
from tui.notify.deliver import Delivery

MAX_BYTES = 64 * 1024


def record_path(session: Path) -> Path:
    return session.with_name(f".{session.stem}.notify.json")


def write(session: Path, deliveries: list[Delivery]) -> None:
    """Best effort: a folder that will not take it must not fail the debate's ending."""
    doc = {"session": session.stem, "targets": [d.as_json() for d in deliveries]}
    try:
        replace_file(record_path(session), (json.dumps(doc, indent=2) + "\n").encode())
    except (OSError, FileRefused):
        pass


def read(session: Path) -> list[Delivery]:
    """The last round's deliveries ([] when none is recorded or the file is unreadable)."""
    try:
        doc = json.loads(read_regular(record_path(session), MAX_BYTES, follow=False))
    except (FileRefused, ValueError):
        return []
    targets = doc.get("targets") if isinstance(doc, dict) else None
    out: list[Delivery] = []
    for t in targets if isinstance(targets, list) else []:
        if not isinstance(t, dict):
            continue
        attempts = t.get("attempts")
        out.append(
            Delivery(
                name=str(t.get("name", "")),
                kind=str(t.get("kind", "")),
                sent=t.get("state") == "sent",
                attempts=attempts if isinstance(attempts, int) else 0,
                reason=str(t.get("reason", "")),
                at=str(t.get("at", "")),
            )
        )
    return out


def summary(deliveries: list[Delivery]) -> str:
    """One line for an inbox row: each target and whether it took the message."""
    return ", ".join(
        f"{d.name} {d.state}" + (f" ({d.reason})" if d.reason else "") for d in deliveries
    )
