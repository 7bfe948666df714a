"""What a turn shows, as plain data: labelled sections of facts, items and text.

The engine's protocols declare how their own turn kinds present in these terms
(``Protocol.present``), and every output (the console cards, the headless
printer, the Markdown export) formats them, so a protocol added from outside
shows everywhere without a renderer knowing its words. No Textual, no Rich.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


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


@dataclass(frozen=True, slots=True)
class Quoted:
    """A quote code found verbatim in a lookup's result and admitted as evidence."""

    what: str  # what the quote backs, in its protocol's word
    id: str  # its id, e.g. C1.1
    source: str  # the lookup's id, e.g. L1
    lines: tuple[int, ...]  # (first, last) line of the result where it was found, or ()
    quote: str


def each(value: object) -> list[Any]:
    """A list field's items (none when absent); another type is a damaged field."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"a list was expected, not {type(value).__name__}")
    return value


def words(value: object) -> str:
    """A vocabulary value for reading: ``no_defect_found`` becomes ``no defect found``."""
    return str(value).replace("_", " ")


def text(label: str, value: object, tone: Tone = Tone.PLAIN) -> list[Section]:
    """A labelled text section, or none when the value is empty."""
    return [Section(label, Emphasis.TEXT, str(value), tone)] if value else []


def facts(label: str, *given: Fact, full_only: bool = False) -> Section:
    """Short labelled values on one line."""
    return Section(label, Emphasis.FACTS, facts=given, full_only=full_only)


def recorded(label: str, result: dict[str, Any], names: dict[str, str]) -> list[Section]:
    """The fields of ``result`` that ``names`` maps to labels, as one line of facts
    (none when the result holds none of them)."""
    found = [Fact(name, str(result[key])) for key, name in names.items() if key in result]
    return [facts(label, *found)] if found else []


def listed(label: str, items: list[Item], tone: Tone = Tone.PLAIN) -> list[Section]:
    """A labelled list, or none when it is empty."""
    return [Section(label, Emphasis.LIST, tone=tone, items=tuple(items))] if items else []


# How an answer's status reads, for the kinds that answer or assess earlier ids.
STATUS_TONE = {"addressed": Tone.GOOD, "rejected": Tone.WARN, "unaddressed": Tone.WARN}


def critique_sections(c: dict[str, Any], *more: Fact) -> list[Section]:
    """A critique's verdict (with any facts its kind adds), weaknesses and suggestions."""
    verdict = str(c.get("verdict", ""))
    verdict_fact = Fact(
        "verdict", words(verdict), Tone.GOOD if verdict == "no_defect_found" else Tone.WARN
    )
    out = [facts("verdict", verdict_fact, *more)]
    out += listed("weaknesses", [Item(str(w)) for w in each(c.get("weaknesses"))], Tone.BAD)
    out += listed("suggestions", [Item(str(s)) for s in each(c.get("suggestions"))], Tone.GOOD)
    return out
