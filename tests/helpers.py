"""Small builders shared by the engine tests."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import io
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tui.engine import Engine, Spec, validate_spec
from tui.engine.core.ports import Provider, ToolBox
from tui.engine.core.records import CONTENT_MODELS, Turn
from tui.engine.core.substance import NO_RULES, StatementRules
from tui.engine.protocols import PROTOCOLS
from tui.engine.record.live import LiveSession
from tui.engine.run.events import Event
from tui.engine.specs.spec import Debater
from tui.providers.registry import close_all
from tui.providers.scripted import ScriptedProvider

SCRIPTED = ScriptedProvider()


def builtin_kinds() -> dict[str, Any]:
    """Every turn kind moot's own protocols play, with its content model: the shared
    kinds (core/records.py) and each built-in protocol's (``Protocol.turn_kinds``)."""
    own = [p for p in PROTOCOLS.values() if p.__module__.startswith("tui.")]
    return {**CONTENT_MODELS, **{k: m for p in own for k, m in p.turn_kinds.items()}}


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
    tools: ToolBox | None = None,
) -> LiveSession:
    """Run a spec to its end into the session file ``out``, then close every provider
    client the registry handed out (the embedded model is left running)."""
    live = LiveSession.start(validate_spec(raw), raw, provider_for, out=out, tools=tools)
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


def assert_judged(turns: Sequence[Turn], spec: Spec, rule: str) -> list[Turn]:
    """Every model turn reached its model and was judged by the engine's rules; the valid ones.

    A 135M model sampled at temperature 0.2 (llama.cpp draws a fresh seed per
    request, and float order differs by CPU) writes a refusable answer now and
    then, so a test of the plumbing never requires a valid one. It requires that
    each answer came back under the engine's schema, and then either counted or
    was refused on record: asked again ``retries`` times, its reason and text
    kept, no vote; and that the debate escalates for a refused turn only if there is one.
    """
    played = [t for t in turns if t.model != "scripted"]
    assert played, "no model turn was played"
    for t in played:
        where = f"{t.speaker} {t.phase}"
        assert t.tokens_out > 0 and t.structured == "json_schema", f"{where}: {t.structured}"
        if t.invalid:
            assert t.error and not t.error.startswith("provider failure"), f"{where}: {t.error}"
            assert t.raw and t.vote is None and not t.content, where
            assert t.attempts == spec.debate.retries + 1, f"{where}: {t.attempts} attempts"
        else:
            assert t.error is None and t.content, f"{where}: {t.error}"
    if rule == "invalid_turn":
        assert any(t.invalid for t in turns), "escalated for a refused turn that is not there"
    return [t for t in played if not t.invalid]


def statement_rules(kind: str) -> StatementRules:
    """A kind's statement rules, from whichever protocol declares them (none: no rules)."""
    declared = (p.rules_for(kind) for p in PROTOCOLS.values())
    return next((rules for rules in declared if rules is not NO_RULES), NO_RULES)


def moot_in_process(
    *args: str, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``moot ARGS`` run in this process, its exit code and both streams captured.

    In process, not ``python -m tui``: a new interpreter cost 0.7-0.9 s of CPU a call,
    and tests/cli/test_cli.py alone makes about seventy. Where the process is what is
    under test (``-m tui``, signals, a closed pipe, bytes on a terminal, a library's
    own logging), tests start it: tests/commands/test_headless_output.py,
    tests/render/test_sanitisers.py, tests/engine/test_redaction.py and others.
    """
    from tui.cli import main as cli_main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        if cwd is not None:
            patch.chdir(cwd)
        patch.setattr(sys, "stdin", io.StringIO(stdin or ""))
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = cli_main(list(args))
                except SystemExit as leaving:  # argparse's usage errors leave this way
                    code = leaving.code if isinstance(leaving.code, int) else 2
        finally:
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
    return subprocess.CompletedProcess(["moot", *args], code, out.getvalue(), err.getvalue())
