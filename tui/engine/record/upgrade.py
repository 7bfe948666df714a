"""Older session files, read in today's format: one upgrade step per format change.

moot 0.1.0 numbered turns from 0 in the file (``[[turns]].index``, the
``candidate:tN`` labels in ``saw``, the turn references in ``[result]``) while
the screen numbered them from 1. From 0.2.0 every written and shown number is
1-based; a 0.1.0 file is renumbered on load, and says so in ``session.upgraded_from``.
"""

from __future__ import annotations

import re
from typing import Any

from tui import __version__

NUMBERED_FROM_ONE = (0, 2, 0)  # the first version that writes 1-based turn numbers
_CANDIDATE = re.compile(r"^candidate:t(\d+)$")
_PROPOSAL = re.compile(r"^(r\d+:.+:t)(\d+)$")
_RESULT_TURNS = ("rubric_assessed_turn", "refused_slot", "winning_turn")
_JUDGE_ROUND_TURNS = ("incumbent_turn", "challenger_turn")


def upgrade_session(doc: dict[str, Any]) -> str | None:
    """Bring a parsed session document to the current format, in place.

    Returns the version that wrote it when it was upgraded, else None. The
    document's ``moot_version`` becomes the current one, so a rewrite of the
    upgraded file is not upgraded twice.
    """
    meta = doc.get("session")
    if not isinstance(meta, dict):
        return None
    written = str(meta.get("moot_version", "0.1.0"))
    if _version(written) >= NUMBERED_FROM_ONE:
        return None
    _number_from_one(doc)
    meta["moot_version"] = __version__
    meta["upgraded_from"] = written
    return written


def _version(text: str) -> tuple[int, ...]:
    """The leading numeric parts of a version string ("0.1.0" -> (0, 1, 0))."""
    parts: list[int] = []
    for piece in text.split("."):
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def _shift(value: Any) -> Any:
    """A 0-based turn number as 1-based; -1 (none) and anything else stay as they are."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value + 1
    return value


def _number_from_one(doc: dict[str, Any]) -> None:
    turns = doc.get("turns")
    for rec in turns if isinstance(turns, list) else []:
        if not isinstance(rec, dict):
            continue
        if "index" in rec:
            rec["index"] = _shift(rec["index"])
        saw = rec.get("saw")
        if isinstance(saw, list):
            rec["saw"] = [_relabel(label) for label in saw]
    result = doc.get("result")
    if not isinstance(result, dict):
        return
    for key in _RESULT_TURNS:
        if key in result:
            result[key] = _shift(result[key])
    for row in _tables(result.get("rubric_turns")):
        if "turn" in row:
            row["turn"] = _shift(row["turn"])
    for row in _tables(result.get("judge_rounds")):
        for key in _JUDGE_ROUND_TURNS:
            if key in row:
                row[key] = _shift(row[key])
    proposal = result.get("proposal_id")
    if isinstance(proposal, str) and (m := _PROPOSAL.match(proposal)):
        result["proposal_id"] = f"{m.group(1)}{int(m.group(2)) + 1}"


def _tables(value: Any) -> list[dict[str, Any]]:
    return [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []


def _relabel(label: Any) -> Any:
    if isinstance(label, str) and (m := _CANDIDATE.match(label)):
        return f"candidate:t{int(m.group(1)) + 1}"
    return label
