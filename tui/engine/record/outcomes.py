"""Outcome records: what became of a decision, written weeks after it and signed.

An architecture decision's truth arrives in production, long after the debate.
``moot outcome`` appends an ``[[outcomes]]`` entry after the ``[result]`` (so the
decision and everything before it stay exactly as signed); several may follow
over time, and the latest is the one that counts. Each holds three fields:

- ``at``: when it was known, an ISO date (a UTC day) or a datetime with its offset;
  never before the decision (the latest timestamp the file holds before its result),
  never before the outcome it follows, never more than a day ahead of now;
- ``outcome``: ``held``, ``failed`` or ``mixed``;
- ``note``: why, in words (bounded, redacted like any text the store writes).

This module builds a new one (refusing what ``moot verify`` would refuse) and
states the checks verify makes of each stored one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from tui.engine.basics.errors import MootInputError
from tui.engine.basics.redact import SECRET_SHAPES
from tui.engine.basics.vocab import ESCALATE

if TYPE_CHECKING:
    from tui.engine.record.session import SessionData

NOTE_CHARS = 2000
AHEAD = timedelta(days=1)  # clocks disagree; a week's error is a typo
FIELDS = ("at", "outcome", "note")
_WORD = re.compile(r"[^\W\d_]{2,}")  # a word: two letters or more, in any script
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


class Outcome(StrEnum):
    """What happened to the decision: it held, it failed, or some of each."""

    HELD = "held"
    FAILED = "failed"
    MIXED = "mixed"


Moment = date | datetime  # a datetime is always aware here


def moment(text: object) -> Moment:
    """An outcome's ``at``: a date, or an aware datetime (a naive one is local time).

    ValueError for anything else.
    """
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a date")
    if _DAY.fullmatch(text):
        return date.fromisoformat(text)
    when = datetime.fromisoformat(text)
    return when if when.tzinfo is not None else when.astimezone()


def before(a: Moment, b: Moment) -> bool:
    """Whether ``a`` is earlier than ``b``; a date against a datetime, by UTC day."""
    if isinstance(a, datetime) and isinstance(b, datetime):
        return a < b
    return _day(a) < _day(b)


def _day(m: Moment) -> date:
    return m.astimezone(UTC).date() if isinstance(m, datetime) else m


def decided_at(data: SessionData) -> datetime | None:
    """When the decision was made: the latest timestamp recorded before the result."""
    stamps = [data.meta.get("created")]
    stamps += [t.started_at for t in data.turns] + [a.get("at") for a in data.actions]
    found: list[datetime] = []
    for stamp in stamps:
        try:
            when = moment(stamp)
        except ValueError:
            continue
        if isinstance(when, datetime):
            found.append(when)
    return max(found, default=None)


def refusal(data: SessionData) -> str | None:
    """Why no outcome may be added to the file: no decision, or a file changed since."""
    if changed := data.changed:
        return f"{changed}: the file was changed"
    if data.result is None:
        return "it has no result yet: an outcome follows a decision"
    if data.result.get("decision") == ESCALATE:
        return (
            "it ended escalate and awaits a person's decision: "
            "decide it first (`moot decide`), then record what became of it"
        )
    return None


def new_outcome(
    data: SessionData, outcome: str, note: str, at: str | None, now: datetime | None = None
) -> dict[str, Any]:
    """The record ``moot outcome`` appends; MootInputError (every problem) if it may not."""
    now = now or datetime.now(UTC)
    stamp = now.isoformat(timespec="milliseconds")  # as precise as the decision's own stamps
    if at is not None:
        try:
            stamp = _stamp(moment(at))
        except ValueError:
            stamp = at  # named below, with every other problem
    record = {"at": stamp, "outcome": outcome, "note": note.strip()}
    problems = [
        f"{name}: {detail}"
        for _, name, ok, detail in claims([*data.outcomes, record], data, now)
        if not ok
    ]
    if problems:
        raise MootInputError(str(data.path), problems)
    return record


def _stamp(when: Moment) -> str:
    return when.isoformat(timespec="seconds") if isinstance(when, datetime) else when.isoformat()


def latest(data: SessionData) -> Mapping[str, Any] | None:
    """The outcome that counts: the last one recorded."""
    return data.outcomes[-1] if data.outcomes else None


def claims(
    outcomes: list[dict[str, Any]], data: SessionData, now: datetime | None = None
) -> Iterator[tuple[str, str, bool, str]]:
    """Each check of each outcome, as ``(where, field, holds, why)``, for ``moot verify``."""
    now = now or datetime.now(UTC)
    decided = decided_at(data)
    previous: Moment | None = decided
    result = data.result
    for n, record in enumerate(outcomes, 1):
        where = f"outcome {n}"
        if result is None:
            yield where, "result", False, "follows no result: an outcome is of a decision"
        elif result.get("decision") == ESCALATE:
            yield where, "result", False, "follows an escalation: no decision to hold or fail"
        else:
            yield where, "result", True, f"of the decision {result.get('decision')!r}"
        extra = sorted(set(record) - set(FIELDS))
        yield (
            where,
            "fields",
            not extra,
            "at, outcome and note" if not extra else f"{', '.join(extra)}: not an outcome's field",
        )
        value = record.get("outcome")
        ok = value in set(Outcome)
        yield where, "outcome", ok, f"{value!r}" + ("" if ok else ": not held, failed or mixed")
        yield where, "note", *_note(record.get("note"))
        try:
            when = moment(record.get("at"))
        except ValueError:
            yield where, "at", False, f"{record.get('at')!r}: not an ISO date or datetime"
            continue
        if previous is not None and before(when, previous):
            after = "the decision" if previous is decided else "the outcome before it"
            yield where, "at", False, f"{when.isoformat()} is before {after} ({previous})"
        elif before(now + AHEAD, when):
            yield where, "at", False, f"{when.isoformat()} is more than a day ahead of now"
        else:
            yield where, "at", True, f"{when.isoformat()}, in order"
        previous = when


def _note(note: object) -> tuple[bool, str]:
    if not isinstance(note, str) or not _WORD.search(note):
        return False, "a note in words is required (why it held or failed)"
    if len(note) > NOTE_CHARS:
        return False, f"{len(note):,} characters; a note holds at most {NOTE_CHARS:,}"
    if (shaped := SECRET_SHAPES.search(note)) is not None:
        return False, f"a key-shaped string at character {shaped.start()}"
    return True, f"{len(note):,} characters"
