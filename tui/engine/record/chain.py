"""The hash chain over a session file's records: an edited, dropped or forged record shows.

Records are chained in the order they were committed: the header (``schema``,
``[session]``, ``[spec]``), then every ``[[turns]]`` entry with the
``[[operator_actions]]`` recorded after it (an action's ``after_turn`` says
where), then the ``[result]``, then each ``[[outcomes]]`` entry (what became of
the decision, recorded later). Each record stores, in its own ``hash`` field::

    sha256( previous record's hash  +  "\\n"  +  canonical(record) )   (hex)

where ``canonical`` is the record's fields except ``hash`` and ``signature`` as JSON with sorted
keys, no spaces, non-ASCII kept (a lone surrogate as U+FFFD, as the file holds
it), UTF-8. The first record's previous hash is the empty string. Files written
before the chain (moot 0.1.0) hold records without ``hash``: such records may
only come first, and still feed the chain, so the first chained record seals them.
A record's ``signature`` (:mod:`tui.engine.record.signing`) signs its hash, so it stands
outside what the hash covers.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

HASH = "hash"
SIGNATURE = "signature"
_UNHASHED = (HASH, SIGNATURE)
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Record:
    """One committed record as stored: ``name`` says which ("turn 3", "result")."""

    name: str
    body: Mapping[str, Any]

    @property
    def stored(self) -> str | None:
        value = self.body.get(HASH)
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class Break:
    """A record whose stored hash is not what the chain says it must be."""

    record: str
    problem: str

    def __str__(self) -> str:
        return f"{self.record}: {self.problem}"


def canonical(record: Mapping[str, Any]) -> bytes:
    """The bytes a record's hash covers: its own fields, ``hash`` and ``signature`` left out."""
    fields = {k: v for k, v in record.items() if k not in _UNHASHED}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def link(previous: str, record: Mapping[str, Any]) -> str:
    """The hash ``record`` carries when it follows a record hashed ``previous``."""
    # A stored hash is file text: an edited one may hold any character, and must
    # only fail to match, never fail to encode.
    head = previous.encode("utf-8", errors="surrogatepass")
    return hashlib.sha256(head + b"\n" + canonical(record)).hexdigest()


def sealed(previous: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``record`` carrying its hash after ``previous``."""
    body = {k: v for k, v in record.items() if k not in _UNHASHED}
    body[HASH] = link(previous, body)
    return body


def in_order(
    header: Mapping[str, Any],
    turns: Sequence[Mapping[str, Any]],
    actions: Sequence[Mapping[str, Any]],
    result: Mapping[str, Any] | None,
    outcomes: Sequence[Mapping[str, Any]] = (),
) -> list[Record]:
    """The records in the order they were committed (the chain's order)."""
    out = [Record("header", header)]
    pending = list(enumerate(actions, 1))

    def actions_up_to(done: int) -> None:
        while pending and _after(pending[0][1]) <= done:
            n, action = pending.pop(0)
            out.append(Record(f"operator action {n} ({action.get('action')})", action))

    for n, turn in enumerate(turns, 1):
        actions_up_to(n - 1)
        number = turn.get("index")
        out.append(Record(f"turn {number if isinstance(number, int) else n}", turn))
    actions_up_to(2**63)
    if result is not None:
        out.append(Record("result", result))
    out += [Record(f"outcome {n}", o) for n, o in enumerate(outcomes, 1)]
    return out


def _after(action: Mapping[str, Any]) -> int:
    value = action.get("after_turn", 0)
    return value if isinstance(value, int) else 0


def tail(records: Sequence[Record]) -> str:
    """The hash the next record chains to: the last one stored, or computed if unchained."""
    previous = ""
    for record in records:
        previous = record.stored or link(previous, record.body)
    return previous


def breaks(records: Sequence[Record], *, unchained_ok: bool) -> list[Break]:
    """Every record that breaks the chain, first break first; empty when it holds.

    ``unchained_ok``: the file was written before the chain, so records without
    a hash are accepted while none before them had one. Each record is checked
    against the hash stored before it, so one edit is named once, where it is.
    """
    found: list[Break] = []
    previous = ""
    chained_from: str | None = None
    refused = unchained_ok  # an unchained record in a chained file is named once
    for record in records:
        expected = link(previous, record.body)
        stored = record.stored
        if stored is None:
            if chained_from is not None:
                found.append(Break(record.name, f"no hash, but the chain runs from {chained_from}"))
            elif not refused:
                refused = True
                found.append(Break(record.name, "no hash; this file's records must be chained"))
        else:
            chained_from = chained_from or record.name
            if stored != expected:
                found.append(
                    Break(
                        record.name,
                        "hash does not match the record and the one before it "
                        "(edited, dropped, reordered or forged)",
                    )
                )
        previous = stored or expected
    return found
