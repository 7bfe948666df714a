"""What a recorded turn says, as labelled sections: one presenter for every turn kind.

The console cards, the headless printer and the Markdown export all show a turn
through :func:`present`; each only formats and escapes the sections for its
output. A kind a protocol adds presents through that protocol (``Protocol.present``). Text here is raw (model text included): escaping belongs to the output.
Nothing here imports Textual or Rich, so every layer can use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tui.engine.basics.vocab import TurnKind
from tui.engine.core.records import Turn
from tui.engine.core.sections import Emphasis as Emphasis
from tui.engine.core.sections import Fact as Fact
from tui.engine.core.sections import Item as Item
from tui.engine.core.sections import Section as Section
from tui.engine.core.sections import Tone as Tone
from tui.engine.core.sections import critique_sections, each, facts, text
from tui.engine.core.sections import words as words
from tui.engine.protocols import kind_owner
from tui.render.rawreply import joined


def _raw_cut(turn: Turn) -> list[Section]:
    """Where a long raw reply was cut, and the whole text's hash (``tui.engine.core.rawtext``)."""
    cut = turn.raw_cut if isinstance(turn.raw_cut, dict) else None
    if cut is None:
        return []
    kept = len(turn.raw) if isinstance(turn.raw, str) else 0
    chars = cut.get("chars")
    whole = f"{chars:,}" if isinstance(chars, int) else str(chars)
    text = (
        f"the first {kept:,} of {whole} characters are kept; "
        f"sha256 of the whole reply: {cut.get('sha256')}"
    )
    return [Section("raw reply cut", Emphasis.TEXT, text, Tone.MUTED)]


def present(turn: Turn) -> tuple[Section, ...]:
    """Every turn kind (and invalid turns, and rubric results) as labelled sections, in order.

    The heading (number, round, phase, speaker) is the turn's own fields; each
    output picks which of them it shows.
    """
    if turn.invalid:
        sections = [
            Section("error", Emphasis.TEXT, turn.error or "", Tone.BAD),
            *(
                [Section("raw reply", Emphasis.TEXT, joined(turn.raw), Tone.MUTED)]
                if turn.raw
                else []
            ),
            *_raw_cut(turn),
        ]
    else:
        sections = _body(turn)
    sections += lookup_sections(turn.lookups)
    derived = turn.derived if isinstance(turn.derived, dict) else {}
    rubric = derived.get("rubric")
    if isinstance(rubric, dict):
        try:
            sections += rubric_sections(rubric)
        except SHAPE_ERRORS:
            sections += [_damaged("rubric assessment"), *_fields(rubric, {}, None)]
    elif rubric is not None:
        sections += [_damaged("rubric assessment"), Section("rubric", Emphasis.TEXT, str(rubric))]
    return tuple(sections)


def lookup_line(lookup: Any) -> str:
    """One lookup in a line: tool, call and short args (the status is the item's own)."""
    if not isinstance(lookup, dict):
        return "(damaged lookup record)"
    args = lookup.get("args")
    shown = ", ".join(f"{k}={v}" for k, v in args.items()) if isinstance(args, dict) else ""
    if len(shown) > 60:
        shown = shown[:59] + "…"
    return f"{lookup.get('tool')}.{lookup.get('call')}({shown})"


def lookup_item(lookup: Any) -> Item:
    """A lookup as a list item: its id, ok with its bytes or failed with its reason."""
    record = lookup if isinstance(lookup, dict) else {}
    if record.get("ok"):
        status, tone = f"ok, {record.get('bytes', 0):,} bytes", Tone.GOOD
        if record.get("cut"):
            status += " (cut)"
    else:
        status, tone = f"failed: {record.get('reason', '')}", Tone.BAD
    return Item(lookup_line(lookup), str(record.get("id", "")), status, tone)


def lookup_sections(lookups: object) -> list[Section]:
    """A turn's lookups, and (for the full view) each result as the model was given it."""
    if not isinstance(lookups, list) or not lookups:
        return []
    sections = [Section("lookups", Emphasis.LIST, items=tuple(map(lookup_item, lookups)))]
    for lookup in lookups:
        if isinstance(lookup, dict) and lookup.get("ok"):
            label = f"{lookup.get('id')} result"
            result = str(lookup.get("result", ""))
            sections.append(Section(label, Emphasis.TEXT, result, Tone.MUTED, full_only=True))
    return sections


# What a field of the wrong type raises in a presenter (a list where text was, a number
# where a list was): a hand-edited or damaged session file; `moot verify` names the field.
SHAPE_ERRORS = (AttributeError, KeyError, TypeError, ValueError)


def _body(turn: Turn) -> list[Section]:
    """The kind's own sections; the stored fields literally when they lack the kind's shape."""
    content = turn.content if isinstance(turn.content, dict) else {}
    derived = turn.derived if isinstance(turn.derived, dict) else {}
    try:
        body = _BODIES.get(turn.kind)
        if body is not None:
            return body(content, derived, turn.variant)
        owner = kind_owner(turn.kind)  # a kind a protocol adds presents as it declares
        shown = owner.present(turn.kind, content, derived, turn.variant) if owner else None
        return _fields(content, derived, turn.variant) if shown is None else list(shown)
    except SHAPE_ERRORS:
        return [_damaged(f"{words(turn.kind)} turn"), *_fields(content, derived, turn.variant)]


def _damaged(what: str) -> Section:
    return Section(
        "damaged",
        Emphasis.TEXT,
        f"this {what} does not have its kind's shape (`moot verify` says where); "
        "its fields are shown as stored",
        Tone.BAD,
    )


Content = dict[str, Any]
Body = Callable[[Content, Content, str | None], list[Section]]


def _position(c: Content, derived: Content, variant: str | None) -> list[Section]:
    return [
        Section("stance", Emphasis.LEAD, str(c.get("stance", "")), Tone.STRONG),
        *text("rationale", c.get("rationale")),
    ]


def _critique(c: Content, derived: Content, variant: str | None) -> list[Section]:
    return critique_sections(c)


def _fields(c: Content, derived: Content, variant: str | None) -> list[Section]:
    """A kind no presenter knows yet: every field, literally."""
    return [Section(str(k), Emphasis.TEXT, str(v)) for k, v in c.items()]


# The shared kinds; a protocol's own kinds present through it (``Protocol.present``).
_BODIES: dict[str, Body] = {
    TurnKind.POSITION: _position,
    TurnKind.CRITIQUE: _critique,
}


def rubric_sections(rubric: Content) -> list[Section]:
    """A rubric assessment: pass or fail, how much evidence is missing, then each property."""
    passed = bool(rubric.get("pass"))
    return [
        facts(
            "rubric",
            Fact("rubric", "pass" if passed else "fail", Tone.GOOD if passed else Tone.BAD),
            Fact("missing evidence", str(rubric.get("missing_evidence", 0)), Tone.MUTED),
        ),
        Section(
            "rubric properties",
            Emphasis.LIST,
            items=tuple(rubric_items(each(rubric.get("properties")))),
            full_only=True,
        ),
    ]


def rubric_items(properties: list[Content]) -> list[Item]:
    """Per property, in the order the design asks for: evidence, rationale, verdict."""
    items = []
    for p in properties:
        verdict = str(p.get("verdict", ""))
        forced = p.get("claimed") == "yes" and verdict != "yes"
        evidence = [
            Fact(
                f"evidence ({e.get('kind', '')})",
                f"“{e.get('quote', '')}” "
                + ("(admitted)" if e.get("admitted") else f"(refused: {e.get('why', '')})"),
                Tone.PLAIN if e.get("admitted") else Tone.BAD,
            )
            for e in each(p.get("evidence"))
        ]
        details = (
            *(evidence or [Fact("evidence", "none", Tone.BAD)]),
            Fact("rationale", str(p.get("rationale", ""))),
            Fact(
                "verdict",
                verdict + (" (claimed yes)" if forced else ""),
                Tone.GOOD if verdict == "yes" else Tone.BAD,
            ),
        )
        items.append(Item("", tag=str(p.get("property", "")), details=details))
    return items
