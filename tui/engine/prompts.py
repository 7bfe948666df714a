"""Prompts: built from scratch for every call from exactly what the role may see."""

from __future__ import annotations

import json
from typing import Any

from tui.engine.events import Slot
from tui.engine.protocols.base import ContextItem
from tui.engine.spec import Debater, Spec

_TASKS = {
    ("debate", "proposal", 1): (
        "State your opening position on the motion. Be concrete: name the decision you "
        "favour, the strongest reason for it, and the main risk you accept."
    ),
    ("debate", "proposal", 2): (
        "A new round. Restate your position, keeping what survived the critiques and "
        "changing what did not. Say plainly if you changed your mind and why."
    ),
    ("debate", "revision", 0): (
        "Revise your position in light of the critiques of it. Answer each weakness: "
        "fix it, or explain precisely why it does not hold."
    ),
    ("debate", "consensus", 0): (
        "Read every debater's latest position and cast your final vote for this round. "
        "Vote for what the arguments support, not for agreement's sake."
    ),
    ("debate", "critique", 0): (
        "Critique the position shown. Find what could fail: unstated assumptions, missing "
        "evidence, risks, and cases where it breaks. List each weakness as one specific "
        "sentence. Only if you find no weakness at all, give the verdict no_defect_found."
    ),
    ("adversary", "proposal", 0): (
        "Write your proposal on the motion: what to do, how, and why. Be specific enough "
        "that a critic can find concrete faults."
    ),
    ("adversary", "revision", 0): (
        "Revise your proposal to answer the critique. Address every weakness; keep what "
        "was not criticised."
    ),
    ("adversary", "critique", 0): (
        "You are the adversary. Your only job is to find failures in the proposal. Do not "
        "praise it. List concrete weaknesses (at least one unless you truly find none, in "
        "which case say no_defect_found), suggestions, a score from 0 to 100, and a "
        "routing: release if it is ready, revise if it must change, escalate if a human "
        "must decide."
    ),
}


def task_for(protocol: str, slot: Slot) -> str:
    """The instruction for a phase; key 1/2 split a phase's first round from later ones."""
    first_or_later = 1 if slot.round == 1 else 2
    for key in ((protocol, slot.phase, first_or_later), (protocol, slot.phase, 0)):
        if key in _TASKS:
            return _TASKS[key]
    return "Take your turn."


_HINTS: dict[tuple[int, tuple[str, ...]], tuple[dict[str, Any], str]] = {}


def _fields_hint(schema: dict[str, Any], votes: list[str]) -> str:
    """Cached per schema object and vote list: it is rebuilt for every call otherwise."""
    key = (id(schema), tuple(votes))
    hit = _HINTS.get(key)
    if hit is None or hit[0] is not schema:
        hit = (schema, _render_hint(schema, votes))
        _HINTS[key] = hit
    return hit[1]


def _render_hint(schema: dict[str, Any], votes: list[str]) -> str:
    props = schema.get("properties", {})
    lines = []
    for name, prop in props.items():
        kind = prop.get("type", "string")
        if "enum" in prop:
            kind = " | ".join(json.dumps(v) for v in prop["enum"])
        elif name == "vote":
            kind = " | ".join(json.dumps(v) for v in votes)
        elif kind == "array":
            kind = "list of strings"
        desc = prop.get("description", "")
        lines.append(f'  "{name}": {kind}' + (f"  // {desc}" if desc else ""))
    return "{\n" + ",\n".join(lines) + "\n}"


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
    system = (
        f"{who}\n\nPhase: {slot.phase} (round {slot.round}).\n"
        f"Task: {task_for(spec.debate.protocol, slot)}\n\n"
        f"Allowed votes: {', '.join(votes)}.\n"
        "Answer with one JSON object and nothing else, with these fields:\n"
        f"{_fields_hint(schema, votes)}"
    )
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
