"""Prompts: built from scratch for every call from exactly what the role may see."""

from __future__ import annotations

import json
from typing import Any

from tui.engine.basics.vocab import TurnKind
from tui.engine.core.schedule import Slot
from tui.engine.core.substance import rule_text
from tui.engine.protocols import kind_owner, protocol_class
from tui.engine.protocols.base import ContextItem
from tui.engine.specs.spec import Debater, Spec
from tui.engine.terms.openvotes import DESCRIPTIONS

# One short answer per shared turn kind (a protocol gives its own kinds'). A small model copies a form far better than it
# follows a description of one, and it may copy the words too: so the examples say
# things true of any debate (a copy reads as a plain, fair point, not as another
# topic). Enum fields (vote, verdict, pick) take the slot's first allowed value.
_EXAMPLES: dict[str, dict[str, Any]] = {
    TurnKind.POSITION: {
        "stance": "I support the motion, on one condition.",
        "rationale": "The gain is clear, and the condition limits the main risk.",
    },
    TurnKind.CRITIQUE: {
        "weaknesses": ["The position gives no evidence for its main claim."],
        "suggestions": ["Add one measured fact that supports the claim."],
    },
}


_EXAMPLE_CACHE: dict[tuple[str, int], tuple[dict[str, Any], str | None]] = {}


def example_for(kind: str, schema: dict[str, Any]) -> str | None:
    """A one-line JSON answer of this kind, with only the fields this slot's schema has:
    a shared kind's from here, a protocol's own kind's from it (``Protocol.examples``).

    Cached per schema object, as the fields hint is: every turn asks for it.
    """
    key = (kind, id(schema))
    hit = _EXAMPLE_CACHE.get(key)
    if hit is None or hit[0] is not schema:
        if len(_EXAMPLE_CACHE) > 256:  # per-slot schemas are new objects: keep it bounded
            _EXAMPLE_CACHE.clear()
        owner = kind_owner(kind)
        sample = _EXAMPLES.get(kind) or (owner.examples.get(kind) if owner else None)
        hit = _EXAMPLE_CACHE[key] = (schema, _example(sample, schema))
    return hit[1]


def _example(sample: dict[str, Any] | None, schema: dict[str, Any]) -> str | None:
    if sample is None:
        return None
    props: dict[str, Any] = {}
    for branch in schema.get("anyOf", [schema]):
        props.update(branch.get("properties", {}))
    out: dict[str, Any] = {}
    for name, prop in props.items():
        choices = prop.get("enum") or ([prop["const"]] if "const" in prop else None)
        if name in sample:
            if len(_list(sample[name])) < int(prop.get("minItems", 0)):
                return None  # the slot asks for more (a round's ids to answer) than it shows
            out[name] = sample[name]
        elif choices:
            out[name] = choices[0]
        else:
            return None  # a field the example cannot fill: the field list alone is clearer
    return json.dumps(out, ensure_ascii=False)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


_HINTS: dict[tuple[int, tuple[str, ...]], tuple[dict[str, Any], str]] = {}


def _fields_hint(schema: dict[str, Any], votes: list[str]) -> str:
    """Cached per schema object and vote list: it is rebuilt for every call otherwise."""
    key = (id(schema), tuple(votes))
    hit = _HINTS.get(key)
    if hit is None or hit[0] is not schema:
        if len(_HINTS) > 256:  # per-slot schemas are new objects: keep the cache bounded
            _HINTS.clear()
        hit = (schema, _render_hint(schema, votes))
        _HINTS[key] = hit
    return hit[1]


def _render_hint(schema: dict[str, Any], votes: list[str], indent: str = "  ") -> str:
    defs = schema.get("$defs", {})

    def resolve(prop: dict[str, Any]) -> dict[str, Any]:
        ref = prop.get("$ref")
        return defs.get(ref.rsplit("/", 1)[-1], {}) if ref else prop

    entries: list[tuple[str, str]] = []
    for name, raw in schema.get("properties", {}).items():
        prop = resolve(raw)
        kind = prop.get("type", "string")
        if "enum" in prop:
            kind = " | ".join(json.dumps(v) for v in prop["enum"])
        elif "const" in prop:
            kind = json.dumps(prop["const"])
        elif name == "vote":
            kind = " | ".join(json.dumps(v) for v in votes) if votes else "string"
        elif kind == "array":
            item = resolve(prop.get("items", {}))
            if item.get("type") == "object" or "properties" in item:
                sub = _render_hint({**item, "$defs": defs}, votes, indent + "  ")
                kind = f"list of {sub}"
            else:
                kind = "list of strings"
        desc = raw.get("description") or prop.get("description", "")
        entries.append((f'{indent}"{name}": {kind}', desc))
    lines = []
    for i, (text, desc) in enumerate(entries):
        comma = "," if i < len(entries) - 1 else ""
        lines.append(text + comma + (f"  // {desc}" if desc else ""))
    close = indent[:-2]
    return "{\n" + "\n".join(lines) + f"\n{close}}}"


def rubric_text(spec: Spec) -> str:
    """The adversarial frame, spelled out: admissible evidence, shortcuts, default no."""
    if spec.rubric is None:
        return ""
    lines = [
        "Rubric. For every property, give evidence first, then your rationale, then the "
        "verdict yes or no. The default is no: a property without admissible evidence is no, "
        "whatever you conclude. Quotes must be copied exactly; a quote that is not found "
        "verbatim is not evidence. Your own reasoning, summaries and final answers are not "
        "evidence."
    ]
    for p in spec.rubric.properties:
        lines.append(
            f"- {p.id}: {p.question} Admissible evidence: {', '.join(p.admissible)}."
            + (f" Forbidden: {', '.join(p.forbidden)}." if p.forbidden else "")
            + "".join(f" Reject this shortcut: {s}" for s in p.shortcuts)
        )
    if any("context_quote" in p.admissible for p in spec.rubric.properties):
        lines.append(
            "A context_quote gives the label of the document it quotes in source (the label "
            "after 'Document' in its heading); it counts only if found in that document."
        )
    return "\n".join(lines)


def build_messages(
    spec: Spec,
    debater: Debater,
    slot: Slot,
    items: list[ContextItem],
    schema: dict[str, Any],
    votes: list[str],
) -> list[dict[str, str]]:
    """System message: who you are and what to return. User message: what you may see."""
    who = f"You are {debater.id}, a participant in a structured debate."
    if debater.role:
        who += f" Your role: {debater.role}"
    if debater.persona:
        who += f" Persona: {debater.persona}"
    has_vote = "vote" in schema.get("properties", {})  # a critique routing its vote has none
    system = f"{who}\n\nPhase: {slot.phase}.\n"
    system += f"Task: {protocol_class(spec).task(slot)}\n\n"
    if has_vote and spec.debate.open_votes:
        system += f"Your vote is your own answer: {DESCRIPTIONS[spec.debate.normaliser]}.\n"
    elif has_vote:
        system += f"Allowed votes: {', '.join(votes)}.\n"
    if "rubric" in schema.get("properties", {}):
        system += rubric_text(spec) + "\n\n"
    rules = protocol_class(spec).rules_for(slot.kind)
    if statement_rule := rule_text(rules, spec.debate.min_words):
        system += statement_rule + "\n\n"
    system += (
        "Answer with one JSON object and nothing else, with these fields:\n"
        f"{_fields_hint(schema, votes)}"
    )
    if example := example_for(slot.kind, schema):
        system += (
            "\n\nExample of the form (choose your own values; say what you think "
            "about this debate in your own words):\n"
            f"{example}\nWrite short, whole sentences, each ending with a full stop."
        )
    # The round comes last: a local server keeps each debater's last prompt in its slot,
    # so a debater playing the same phase again re-reads only this line and what it sees.
    system += f"\n\nRound {slot.round}."
    sections = [f"## {heading}\n{text}" for _, heading, text in items]
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": "\n\n".join(sections)},
    ]


def reask_message(error: str) -> dict[str, str]:
    return {
        "role": "user",
        "content": (
            f"Your previous answer was not accepted: {error}. Answer again with one JSON "
            "object that has every required field."
        ),
    }
