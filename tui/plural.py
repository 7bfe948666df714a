"""Counts in words: "1 turn", "2 turns", never "1 turns" or "turn(s)"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun in the number it takes (``plural`` for irregular nouns)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def all_hold(claims: int) -> str:
    """What ``moot verify`` says when every claim holds, in the number it takes."""
    return "its 1 claim holds" if claims == 1 else f"all {claims} claims hold"


def do_not_hold(n: int, noun: str) -> str:
    """ "1 claim does not hold", "2 claims do not hold"."""
    return f"{counted(n, noun)} {'does' if n == 1 else 'do'} not hold"
