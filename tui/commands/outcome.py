"""``moot outcome``: record what became of a decision, weeks after it, signed by you.

The record is appended after the ``[result]`` (:mod:`tui.engine.record.outcomes` says
what it holds and what ``moot verify`` checks of it). A file with no decision,
one still awaiting a person, or one changed since it was written is refused,
and left exactly as it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui.engine.basics.errors import MootInputError
from tui.engine.record.keys import user_signer
from tui.engine.record.outcomes import new_outcome, refusal
from tui.engine.record.session import SessionStore, load_session


def record_outcome(path: str | Path, outcome: str, note: str, at: str | None) -> dict[str, Any]:
    """Append one outcome to the session at ``path``; the record as written.

    MootInputError (exit 2) for a refused file or outcome; nothing is written then.
    """
    data = load_session(path)
    if why := refusal(data):
        raise MootInputError(str(path), [why])
    record = new_outcome(data, outcome, note, at)
    signer = user_signer()
    store, loaded = SessionStore.open_existing(path, signer=signer)
    try:
        if loaded.records != data.records:  # changed while we checked: add only to what was read
            raise MootInputError(str(path), ["the file changed while it was read; run again"])
        store.append_outcome(record)
    finally:
        store.close()
    return record
