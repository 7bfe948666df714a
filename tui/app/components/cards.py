"""One widget per completed turn: the presenter's sections as console text.

What a turn says is decided in :mod:`tui.render.present`; this module only styles it
and neutralises untrusted text (never markup) for the terminal.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from tui.engine.basics.vocab import TurnKind
from tui.engine.core.records import Turn
from tui.render.present import Emphasis, Item, Section, Tone, present
from tui.render.textsafe import CARD_LIMIT, bound, clean, clean_line

Part = tuple[str, str] | str

TONE_STYLE = {
    Tone.PLAIN: "",
    Tone.STRONG: "bold",
    Tone.MUTED: "$text-muted",
    Tone.GOOD: "$success",
    Tone.WARN: "$warning",
    Tone.BAD: "$error",
    Tone.ACCENT: "$accent",
}
ITEM_LIMIT, DETAIL_LIMIT, MAX_ITEMS = 1200, 600, 20


def _strong(tone: Tone) -> str:
    """A short value's style: its tone's colour, in bold."""
    return f"bold {TONE_STYLE[tone]}".strip()


def turn_heading(turn: Turn) -> list[Part]:
    parts: list[Part] = [(f"#{turn.index} r{turn.round} {clean_line(turn.phase)}", "$text-muted")]
    if turn.target:
        parts.append((f" → {clean_line(turn.target)}", "$text-muted"))
    if turn.invalid:
        parts.append(("  ✗ invalid", "bold $error"))
    return parts


def turn_body(turn: Turn, limit: int = CARD_LIMIT, *, full: bool = False) -> list[Part]:
    """The readable parts of a turn, as (text, style) pairs; never markup.

    ``full`` (the transcript) adds what the card leaves out, such as lookup results.
    """
    shown = [s for s in present(turn) if full or not s.full_only]
    parts: list[Part] = []
    for section in shown:
        parts += _section(section, limit)
    if turn.vote:
        parts.append(("\nvote ", "$text-muted"))
        parts.append((f" {clean_line(turn.vote)} ", "bold $text on $primary-muted"))
    return parts


def _section(section: Section, limit: int) -> list[Part]:
    text = bound(clean(section.text), limit)
    if section.emphasis is Emphasis.LEAD:
        return [(f"\n{text}", "bold")]
    if section.emphasis is Emphasis.FACTS:
        parts: list[Part] = ["\n"]
        for i, fact in enumerate(section.facts):
            parts.append((("  " if i else "") + f"{clean_line(fact.label)}: ", "$text-muted"))
            parts.append((clean_line(fact.value), _strong(fact.tone)))
        return parts
    label = (f"\n{clean_line(section.label)}", "$text-muted")
    if section.emphasis is Emphasis.TEXT:  # a text of several lines starts on its own
        return [
            (label[0] + (":\n" if "\n" in text else ": "), label[1]),
            (text, TONE_STYLE[section.tone]),
        ]
    parts = [label]
    for item in section.items[:MAX_ITEMS]:
        parts += _item(item, TONE_STYLE[section.tone] or "$text-muted")
    if len(section.items) > MAX_ITEMS:
        parts.append((f"\n … {len(section.items) - MAX_ITEMS} more", "$text-muted"))
    return parts


def _item(item: Item, bullet: str) -> list[Part]:
    parts: list[Part] = [("\n • ", bullet)]
    if item.tag:
        parts.append((clean_line(item.tag) + " ", "bold"))
    if item.status:
        parts.append((clean_line(item.status) + " ", _strong(item.tone)))
    if item.text:
        parts.append(
            ("— " if item.tag or item.status else "") + bound(clean(item.text), ITEM_LIMIT)
        )
    for fact in item.details:
        parts.append((f"\n   {clean_line(fact.label)}: ", "$text-muted"))
        parts.append((bound(clean(fact.value), DETAIL_LIMIT), TONE_STYLE[fact.tone]))
    return parts


def turn_content(turn: Turn, limit: int = CARD_LIMIT) -> Content:
    return Content.assemble(*turn_heading(turn), *turn_body(turn, limit))


class TurnCard(Static):
    """A completed turn."""

    DEFAULT_CSS = """
    TurnCard { padding: 0 1; margin-bottom: 1; background: $boost; }
    TurnCard.-critique { border-left: outer $warning 60%; }
    TurnCard.-invalid { border-left: outer $error; }
    """

    def __init__(self, turn: Turn) -> None:
        super().__init__(turn_content(turn), markup=False)
        self.turn = turn
        if turn.kind != TurnKind.POSITION:
            self.add_class("-critique")
        if turn.invalid:
            self.add_class("-invalid")
