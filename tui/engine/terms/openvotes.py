"""Open votes: a debater's vote is its own answer, counted in a normal form.

With ``votes = "open"`` there is no list to choose from (a sum, a name, a date);
two answers count as the same vote when the spec's normaliser gives the same
text. The normalisers are pure and named in the spec, so ``moot verify``
recomputes every counted vote from the turn's content alone.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Literal

Normaliser = Literal["number", "text"]
OPEN = "open"

# A number as people write it: an optional sign (not a minus between two terms),
# digits with optional thousands commas, an optional fraction.
_NUMBER = re.compile(r"(?<![\w.)])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])")
MAX_VOTE_CHARS = 200  # an answer, not an essay: the rationale carries the reasons


def final_number(text: str) -> str | None:
    """The last number in ``text``, written plainly (``1,200.0`` -> ``1200``); None if none."""
    found = _NUMBER.findall(text[-MAX_VOTE_CHARS * 10 :])
    if not found:
        return None
    try:
        value = Decimal(found[-1].replace(",", ""))
    except InvalidOperation:  # the pattern admits only numbers; kept for safety of input
        return None
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def plain_text(text: str) -> str | None:
    """Case, spacing and a closing full stop ignored; None for an empty answer."""
    said = " ".join(text.casefold().split()).rstrip(".").strip()
    return said[:MAX_VOTE_CHARS] or None


NORMALISERS = {"number": final_number, "text": plain_text}
DESCRIPTIONS: dict[str, str] = {
    "number": "a number; the last number you write there is the vote counted",
    "text": "a short answer; case and spacing are ignored when votes are compared",
}


def normalise(normaliser: str, text: str) -> str | None:
    """The vote ``text`` counts as under ``normaliser``; None when it holds no answer."""
    return NORMALISERS[normaliser](text)
