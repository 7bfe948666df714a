"""What a turn shows, as plain data: labelled sections of facts, items and text.

The engine's protocols declare how their own turn kinds present in these terms
(``Protocol.present``), and every output (the console cards, the headless
printer, the Markdown export) formats them, so a protocol added from outside
shows everywhere without a renderer knowing its words. No Textual, no Rich.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Emphasis(StrEnum):
    """How a section is laid out; outputs map each to their own style."""

    LEAD = "lead"  # the turn's main claim: first and strongest, unlabelled on a terminal
    TEXT = "text"  # further model text under its label
    FACTS = "facts"  # short values on one line (verdict, score, routing)
    LIST = "list"  # labelled items (weaknesses, challenges, responses)


class Tone(StrEnum):
    """What a value means to the reader; outputs pick the colour or weight."""

    PLAIN = "plain"
    STRONG = "strong"
    MUTED = "muted"
    GOOD = "good"
    WARN = "warn"
    BAD = "bad"
    ACCENT = "accent"


@dataclass(frozen=True, slots=True)
class Fact:
    """A short labelled value, usually a word from a fixed vocabulary."""

    label: str
    value: str
    tone: Tone = Tone.PLAIN


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of a list: an optional id and status, its text, labelled details."""

    text: str
    tag: str = ""  # an id such as a challenge's C1.2, shown strong
    status: str = ""  # a word from a fixed vocabulary, shown in ``tone``
    tone: Tone = Tone.PLAIN
    details: tuple[Fact, ...] = ()  # labelled lines under the item


@dataclass(frozen=True, slots=True)
class Section:
    """One labelled part of a turn; which fields are set depends on its emphasis."""

    label: str
    emphasis: Emphasis
    text: str = ""
    tone: Tone = Tone.PLAIN
    items: tuple[Item, ...] = ()
    facts: tuple[Fact, ...] = ()
    full_only: bool = False  # detail the compact console card leaves to its panels
