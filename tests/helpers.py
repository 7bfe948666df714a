"""Small builders shared by the engine tests."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from tui.engine import Engine, Spec, validate_spec
from tui.engine.events import Event
from tui.providers.scripted import ScriptedProvider

SCRIPTED = ScriptedProvider()


def debate_raw(votes: dict[str, list[str]], **debate: Any) -> dict[str, Any]:
    """A scripted debate spec; ``votes`` maps debater id to its cycled votes."""
    section = {"title": "Test debate", "motion": "Ship it.", **debate}
    return {
        "debate": section,
        "debaters": [
            {"id": did, "model": "scripted", "script": {"votes": v}} for did, v in votes.items()
        ],
    }


def adversary_raw(routings: list[str], **script: Any) -> dict[str, Any]:
    return {
        "debate": {
            "title": "Adversary test",
            "motion": "Write a plan.",
            "protocol": "adversary",
            "proposer": "author",
            "critic": "critic",
            "max_rounds": 3,
        },
        "debaters": [
            {"id": "author", "model": "scripted"},
            {"id": "critic", "model": "scripted", "script": {"routings": routings, **script}},
        ],
    }


def with_script(raw: dict[str, Any], debater: str, **script: Any) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    for d in out["debaters"]:
        if d["id"] == debater:
            d.setdefault("script", {}).update(script)
    return out


def run_engine(spec: Spec | dict[str, Any], **kwargs: Any) -> tuple[Engine, list[Event]]:
    if isinstance(spec, dict):
        spec = validate_spec(spec)
    engine = Engine(spec, lambda d: SCRIPTED, **kwargs)
    events: list[Event] = []
    engine.subscribe(events.append)
    asyncio.run(engine.run())
    return engine, events
