"""Vote counting and the consensus rule, as pure functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def count(latest: Mapping[str, str], votes: Iterable[str]) -> dict[str, int]:
    """A tally with every allowed vote present (zero when unused)."""
    tally = dict.fromkeys(votes, 0)
    for vote in latest.values():
        tally[vote] = tally.get(vote, 0) + 1
    return tally


def consensus(tally: Mapping[str, int], threshold: int) -> str | None:
    """The vote that reached the threshold with no other vote tying it, else None."""
    if not tally:
        return None
    best = max(tally.values())
    if best < threshold:
        return None
    leaders = [v for v, n in tally.items() if n == best]
    return leaders[0] if len(leaders) == 1 else None
