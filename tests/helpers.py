"""Small builders shared by the engine tests."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui.engine import Engine, Spec, validate_spec
from tui.engine.events import Event
from tui.engine.live import LiveSession
from tui.engine.ports import Provider
from tui.engine.spec import Debater
from tui.providers.registry import close_all
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


def sequential_raw(
    *, consensus_threshold: int, turn_delay_ms: int, **debate: Any
) -> dict[str, Any]:
    """Three scripted debaters (release, revise, escalate) speaking one at a time, each
    turn taking ``turn_delay_ms``: room for an operator action between turns."""
    raw = debate_raw(
        {"a": ["release"], "b": ["revise"], "c": ["escalate"]},
        consensus_threshold=consensus_threshold,
        parallel=False,
        **debate,
    )
    for d in "abc":
        raw = with_script(raw, d, turn_delay_ms=turn_delay_ms)
    return raw


def adversary_raw(routings: list[str], **script: Any) -> dict[str, Any]:
    """An adversary spec whose critic asks for ``routings`` in turn.

    A ``release`` comes with a critique the release gate accepts (no weakness,
    ``no_defect_found``, score 90), a ``revise`` with one weakness, unless
    ``script`` sets those fields itself.
    """
    clean = [r == "release" for r in routings]
    script = {
        "weaknesses": [[] if c else ["The plan names no way back if it fails."] for c in clean],
        "verdicts": ["no_defect_found" if c else "defects_found" for c in clean],
        "scores": [90 if c else 40 for c in clean],
        **script,
    }
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


def small_model_challenge(title: str) -> dict[str, Any]:
    """The ``[debate]`` of the challenge the 135M-model tests play (embedded or over HTTP):
    ``owner`` defends a cache plan, ``reviewer`` challenges it."""
    return {
        "title": title,
        "motion": "Plan to cache the product catalogue.",
        "protocol": "challenge",
        "defender": "owner",
        "adversary": "reviewer",
        "artifact": "Cache every catalogue response for 24 hours. Invalidate nothing.",
        "max_rounds": 2,
        "retries": 2,  # a 135M model may need the reason twice; the turn must still validate
        "min_words": 1,  # a 135M model names concerns in a word ("staleness")
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


async def run_live(
    raw: dict[str, Any],
    provider_for: Callable[[Debater], Provider],
    out: Path,
    on_event: Callable[[Event], None] | None = None,
) -> LiveSession:
    """Run a spec to its end into the session file ``out``, then close every provider
    client the registry handed out (the embedded model is left running)."""
    live = LiveSession.start(validate_spec(raw), raw, provider_for, out=out)
    if on_event is not None:
        live.engine.subscribe(on_event)
    try:
        await live.engine.run()
    finally:
        live.close()
        await close_all(stop_local_model=False)
    return live


async def until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    """Let the running loop go on until ``predicate()`` is truthy; fail after ``timeout`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError("condition not met before the deadline")
        await asyncio.sleep(0.005)
