"""``saw`` stored compactly: a turn's view as slices of the first view of its phase.

When every debater sees every position, explicit ``saw`` lists make a session
file grow with the square of the debater count. The first turn of each round
and phase stores its list in full; a later turn of that phase stores literal
labels and ``@tK[i:j]`` references, each meaning labels ``i`` to ``j - 1``
(from 0) of turn K's stored list. Labels begin with a letter, so a reference is
never mistaken for one, and files holding only labels read unchanged. Loading
expands every list, so what a turn saw stays re-checkable from the file alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

_REF = re.compile(r"@t(\d{1,9})\[(\d{1,6}):(\d{1,6})\]")


def _is_explicit(saw: Any) -> bool:
    return isinstance(saw, list) and all(isinstance(s, str) and not s.startswith("@") for s in saw)


def compact_saw(saw: Sequence[str], base_index: int, base: Sequence[str]) -> list[str]:
    """``saw`` as labels and slices of ``base`` (turn ``base_index``'s list), whichever is shorter."""
    out: list[str] = []
    matcher = SequenceMatcher(None, list(base), list(saw), autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        ref = f"@t{base_index}[{i1}:{i2}]"
        if op == "equal" and len(ref) < sum(len(s) + 3 for s in saw[j1:j2]):
            out.append(ref)
        else:
            out.extend(saw[j1:j2])
    return out


def expand_saw(saw: Sequence[str], explicit: Mapping[int, Sequence[str]]) -> list[str]:
    """The labels a stored ``saw`` names; ``explicit`` maps turn numbers to full lists.

    A reference that does not resolve is kept as written, so ``moot verify``
    reports the list as not matching the protocol's view rather than refusing the file.
    """
    out: list[str] = []
    for item in saw:
        found = _REF.fullmatch(item) if isinstance(item, str) else None
        base = explicit.get(int(found.group(1))) if found else None
        if found is None or base is None:
            out.append(item)
            continue
        start, stop = int(found.group(2)), int(found.group(3))
        if stop > len(base) or start >= stop:
            out.append(item)
        else:
            out.extend(base[start:stop])
    return out


def _phase_key(record: Mapping[str, Any]) -> tuple[Any, Any]:
    return record.get("round"), record.get("phase")


def compact_record(record: dict[str, Any], earlier: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A turn record whose ``saw`` refers to an earlier full list of its phase, if shorter.

    A phase's turns are stored together, so the search stops at the first
    earlier record of another round or phase.
    """
    saw = record.get("saw")
    if not saw or not _is_explicit(saw):
        return record
    key = _phase_key(record)
    for other in reversed(earlier):
        if _phase_key(other) != key:
            return record
        index, base = other.get("index"), other.get("saw")
        if isinstance(index, int) and _is_explicit(base):
            short = compact_saw(saw, index, base)
            return {**record, "saw": short} if sum(map(len, short)) < sum(map(len, saw)) else record
    return record


def expand_records(records: Sequence[Any]) -> list[Any]:
    """Stored turn records with every ``saw`` in full (copies; the stored ones keep their hash)."""
    explicit = {
        r["index"]: r["saw"]
        for r in records
        if isinstance(r, Mapping) and isinstance(r.get("index"), int) and _is_explicit(r.get("saw"))
    }
    out: list[Any] = []
    for r in records:
        saw = r.get("saw") if isinstance(r, Mapping) else None
        if isinstance(saw, list) and not _is_explicit(saw):
            r = {**r, "saw": expand_saw(saw, explicit)}
        out.append(r)
    return out
