"""Exports of a saved session: a Markdown report, or the result/handoff JSON."""

from __future__ import annotations

from typing import Any

from tui.engine.basics.redact import Redactor
from tui.engine.basics.vocab import is_deferral
from tui.engine.core.records import Turn
from tui.engine.protocols import protocol_class
from tui.engine.record.redacted import redacted_session
from tui.engine.record.session import SessionData
from tui.engine.record.verify import verify
from tui.plural import all_hold
from tui.render.present import SHAPE_ERRORS, Emphasis, Item, Section, present, rubric_items
from tui.render.textsafe import json_rows, md_code, md_inline, md_text

# Every value below that is not this module's own literal text goes through
# tui.render.textsafe's Markdown sanitiser: md_text (quoted blocks), md_inline (one line)
# or md_code (ids and model names), so no model or spec text can add structure.


# The version of the JSON document; docs/schemas/ holds its JSON Schema under this name.
EXPORT_SCHEMA = "moot.export/2"


def verification(data: SessionData) -> dict[str, Any]:
    """``moot verify``'s outcome for the file as loaded, for the document itself to carry.

    An export of a tampered file must say so where it is read, not only on stderr.
    """
    report = verify(data)
    checked: dict[str, Any] = Redactor.for_spec(data.spec).tree(
        {
            "ok": report.ok,
            "claims": len(report.claims),
            "failures": [
                {"where": c.where, "field": c.field, "detail": c.detail} for c in report.failures
            ],
            "notes": report.notes,
        }
    )
    return checked


def to_json(data: SessionData) -> str:
    """Machine-readable: spec, result (with protocol reports), turns and operator actions."""
    checked = verification(data)
    data = redacted_session(data)
    doc: dict[str, Any] = {
        "schema": EXPORT_SCHEMA,
        "verification": checked,
        "session": data.meta,
        "title": data.spec.debate.title,
        "motion": data.spec.debate.motion,
        "protocol": data.spec.debate.protocol,
        "result": data.result,
        "turns": [t.to_record() for t in data.turns],
        "operator_actions": data.actions,
        "documents": [
            {k: v for k, v in doc.record().items() if k != "text"} for doc in data.spec.documents
        ],
    }
    handoff = _handoff(data)
    if handoff is not None:
        doc["handoff"] = handoff
    if data.outcomes:  # what became of the decision, oldest first; the latest counts
        doc["outcomes"] = data.outcomes
    return json_rows(doc)


def _handoff(data: SessionData) -> dict[str, Any] | None:
    """The protocol's handoff document, if it has one and the session has ended."""
    if not data.result:
        return None
    return protocol_class(data.spec).handoff(data.result, data.turns)


def _md(text: Any) -> str:
    """Untrusted text inside a quote: escaped (:func:`md_text`), each line kept quoted.

    No line ends in spaces: a blank line stays inside the quote as a bare ``>``.
    """
    return "\n".join(
        ("> " + line).rstrip() if n else line.rstrip()
        for n, line in enumerate(md_text(text).split("\n"))
    )


def _title(label: str) -> str:
    return md_inline(label[:1].upper() + label[1:])


def _section_md(section: Section) -> list[str]:
    if section.emphasis is Emphasis.FACTS:
        return [
            " · ".join(f"{_title(f.label)}: **{md_inline(f.value)}**" for f in section.facts),
            "",
        ]
    if section.emphasis in (Emphasis.LEAD, Emphasis.TEXT):
        return [f"> **{_title(section.label)}:** {_md(section.text)}", ""]
    return [f"{_title(section.label)}:", "", *map(_item_md, section.items), ""]


def _item_md(item: Item) -> str:
    head = " ".join(
        x for x in (item.tag and f"**{md_inline(item.tag)}**", md_inline(item.status)) if x
    )
    line = "- " + " — ".join(x for x in (head, md_inline(item.text)) if x)
    return "\n".join(
        [line, *(f"  - {md_inline(f.label)}: {md_inline(f.value)}" for f in item.details)]
    )


def _turn_md(t: Turn) -> list[str]:
    head = f"### Turn {t.index} · round {t.round} · {md_inline(t.phase)} · {md_code(t.speaker)}"
    if t.target:
        head += f" → {md_code(t.target)}"
    if t.invalid:
        head += " · **invalid**"
    lines = [head, ""]
    for section in present(t):
        quoted = _section_md(section)
        if lines[-2:-1] and lines[-2].startswith(">") and quoted[0].startswith(">"):
            lines[-1] = ">"  # one quote, not two quotes a blank line apart
        lines += quoted
    saw = ", ".join(map(md_inline, t.saw)) or "nothing"
    meta = f"model {md_code(t.model)} ({md_inline(t.family)}), saw: {saw}"
    if t.vote:
        meta = f"vote **{md_inline(t.vote)}** · " + meta
    return [*lines, meta, ""]


def _shared_md(r: dict[str, Any]) -> list[str]:
    """The result fields every protocol may have: the cross-family policy and the rubric."""
    lines = [
        f"- {key}: {md_inline(r[key])}"
        for key in (
            "cross_family_held",
            "weak_adversarial_pass",
            "rubric_pass",
            "rubric_missing_evidence",
        )
        if key in r
    ]
    if r.get("rubric"):
        lines += ["", "Rubric (last assessed turn):", "", *map(_item_md, rubric_items(r["rubric"]))]
    return lines


def _result_md(r: dict[str, Any], said: list[str], own: list[Section]) -> list[str]:
    lines = [
        f"- decision: **{md_inline(r.get('decision'))}** by rule "
        f"{md_code(r.get('decision_rule'))} ({md_inline(r.get('decided_by'))}"
        + (f", via {md_code(r['decided_via'])}" if r.get("decided_via") else "")
        + ")"
    ]
    if is_deferral(r.get("decision"), r.get("decision_rule")):
        lines.append("- deferred by the operator: unresolved, awaiting a person")
    if r.get("rationale"):
        lines.append(f"- operator rationale: {md_inline(r['rationale'])}")
    if any(r.get("vote_tally", {}).values()):
        tally = ", ".join(f"{md_inline(k)} {v}" for k, v in r["vote_tally"].items())
        lines.append("- tally: " + tally)
    lines.append(f"- rounds run: {r.get('rounds_run')} of {r.get('max_rounds')}")
    lines += [f"- {md_inline(line)}" for line in said]  # the protocol's own outcome
    lines += _shared_md(r)
    if own:  # the protocol's own fields, as it presents them
        lines.append("")
        for section in own:
            lines += _section_md(section)
        lines.pop()  # the last section's blank line: the next heading brings its own
    return lines


def outcome_lines(outcomes: list[dict[str, Any]]) -> list[str]:
    """Each outcome recorded after the decision as a Markdown list item, the latest marked."""
    return [
        f"- {md_inline(o.get('at'))}: **{md_inline(o.get('outcome'))}**"
        + (" (the latest: it counts)" if n == len(outcomes) and n > 1 else "")
        + f" — {md_inline(o.get('note'))}"
        for n, o in enumerate(outcomes, 1)
    ]


def _verification_md(checked: dict[str, Any]) -> list[str]:
    """The verify outcome as Markdown lines: one when every claim holds, else each failure."""
    if checked["ok"]:
        return [f"`moot verify` passes: {all_hold(checked['claims'])}."]
    failures = checked["failures"]
    return [
        f"**`moot verify` fails: {len(failures)} of {checked['claims']} claims do not hold.** "
        "The session file was changed after moot wrote it, or is damaged; do not rely on "
        "what follows without checking:",
        "",
        *(
            f"- {md_inline(f['where'])}: {md_inline(f['field'])}: {md_inline(f['detail'])}"
            for f in failures
        ),
    ]


def to_markdown(data: SessionData) -> str:
    checked = verification(data)
    data = redacted_session(data)
    d = data.spec.debate
    r = data.result or {}
    lines = [
        f"# {md_inline(d.title)}",
        "",
        *_verification_md(checked),
        "",
        f"**Motion:** {_md(d.motion)}",
        "",
        f"Protocol {md_code(d.protocol)} · debaters: "
        + ", ".join(f"{md_code(x.id)} ({md_inline(x.model)})" for x in data.spec.debaters),
        "",
    ]
    if d.artifact:
        lines += ["**Artifact:**", "", f"> {_md(d.artifact)}", ""]
    if data.spec.documents:
        lines += ["**Documents:**", ""]
        for doc in data.spec.documents:
            seen = ", ".join(doc.roles) if doc.roles else "everyone"
            lines.append(
                f"- {md_inline(doc.label)}: {md_inline(doc.path)}, {doc.size} bytes, "
                f"sha256 {md_code(doc.sha256)}, seen by {md_inline(seen)}"
            )
        lines.append("")
    lines += ["## Result", ""]
    if r:
        try:
            protocol = protocol_class(data.spec)
            own = protocol.result_sections(r, data.turns)
            lines += _result_md(r, protocol.result_lines(r), own)
        except SHAPE_ERRORS:  # a damaged file: say so, and show the table as stored
            lines += [
                "_The stored result does not have its shape (`moot verify` says where); "
                "its fields as stored:_",
                "",
                *(f"- {md_inline(k)}: {md_inline(v)}" for k, v in r.items()),
            ]
    else:
        lines.append("_The session has not ended._")
    if data.outcomes:
        lines += ["", "## Outcomes", "", *outcome_lines(data.outcomes)]
    lines += ["", "## Transcript", ""]
    for t in data.turns:
        lines += _turn_md(t)
    if data.actions:
        lines += ["## Operator actions", ""]
        for a in data.actions:
            extra = ", ".join(
                f"{md_inline(k)}: {md_inline(v)}"
                for k, v in a.items()
                if k not in ("at", "action", "after_turn")
            )
            when = f"{md_inline(a['at'])} after turn {md_inline(a['after_turn'])}"
            lines.append(f"- {when}: **{md_inline(a['action'])}** {extra}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")  # the writer ends the file with one newline
