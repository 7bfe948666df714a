"""Helpers for the console tests: scripted specs and a polling wait."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomli_w

from tui.providers.scripted import ScriptedProvider

_SCRIPTED = ScriptedProvider(paced=True)  # as the console has it: tokens stream at their pace


def scripted(_debater: Any) -> ScriptedProvider:
    """Every debater in these tests is scripted; never the registry (no LiteLLM)."""
    return _SCRIPTED


def debate_spec(
    *,
    title: str = "Ship the migration?",
    motion: str = "Ship the database migration without a rollback check.",
    debaters: int = 3,
    max_rounds: int = 1,
    phases: list[str] | None = None,
    threshold: int | None = None,
    parallel: bool = False,
    token_delay_ms: float = 0.0,
    scripts: dict[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    ids = ["planner", "critic", "operator", "skeptic", "builder", "auditor"][:debaters]
    votes_cycle = [["release"], ["revise"], ["escalate"], ["revise"], ["release"], ["revise"]]
    spec: dict[str, Any] = {
        "debate": {
            "title": title,
            "motion": motion,
            "protocol": "debate",
            "max_rounds": max_rounds,
            "consensus_threshold": threshold or debaters,
            "parallel": parallel,
        },
        "debaters": [],
    }
    if phases is not None:
        spec["debate"]["phases"] = phases
    for i, did in enumerate(ids):
        script: dict[str, Any] = {"votes": votes_cycle[i]}
        if token_delay_ms:
            script["token_delay_ms"] = token_delay_ms
        script.update((scripts or {}).get(i, {}))
        spec["debaters"].append(
            {
                "id": did,
                "model": "scripted",
                "family": f"fam{i}",
                "role": f"Debater {did}.",
                "script": script,
            }
        )
    return spec


def write_spec(directory: Path, spec: dict[str, Any], name: str = "spec.toml") -> Path:
    path = directory / name
    path.write_text(tomli_w.dumps(spec), encoding="utf-8")
    return path


def session_file(dirs: dict[str, Path]) -> Path:
    """The one session file a console run left in the sessions folder."""
    files = list(dirs["sessions"].glob("*.toml"))
    assert len(files) == 1, files
    return files[0]


async def wait_until(pilot: Any, predicate: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Let the app run until ``predicate()`` is truthy; fail after ``timeout`` seconds.

    The deadline only bounds a failure: on two cores loaded by other work a
    scripted turn of a few seconds can take several times as long, so it is wide.
    Between checks the app runs on its own (a plain sleep): ``pilot.pause`` posts a
    message to every widget on the screen and forces a frame, and polling with it
    every 10 ms cost more CPU than the console it watched.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            await pilot.pause(0.02)  # let the new state settle (layout) before acting on it
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {predicate}")
        await asyncio.sleep(0.01)


async def run_until_exit(
    app: Any, size: tuple[int, int] = (120, 30), timeout: float = 60.0
) -> None:
    """Run an app that quits by itself (a refused start) to its end, with no pilot.

    A pilot's wait for the screen to settle never returns if the app exits under
    it (Textual drops the queued callbacks), so a start that is refused fast would
    fail the test 30 s later instead of passing.
    """
    await asyncio.wait_for(app.run_async(headless=True, size=size), timeout)


def make_app(tmp: Path, **kwargs: Any) -> Any:
    from tui.app.app import MootApp

    kwargs.setdefault("provider_for", scripted)
    kwargs.setdefault("examples_dir", tmp / "no-examples")
    kwargs.setdefault("sessions_dir", tmp / "sessions")
    return MootApp(**kwargs)


async def record_session(spec: dict[str, Any], out: Path) -> Path:
    """Run a scripted debate without the console and leave its session file at ``out``."""
    from tests.helpers import SCRIPTED  # unpaced: no console watches these tokens
    from tui.engine.record.live import LiveSession
    from tui.engine.specs.spec import validate_spec

    session = LiveSession.start(validate_spec(spec), spec, lambda _d: SCRIPTED, out=out)
    try:
        await session.engine.run()
    finally:
        session.close()
    return out


def live_screen(app: Any) -> Any:
    from tui.app.screens.live import LiveScreen

    screen = app.debate_screen()
    assert isinstance(screen, LiveScreen)
    return screen


def decided(screen: Any) -> tuple[str, str, str] | None:
    """The live screen's decision as (decision, rule, decided_by), or None."""
    d = screen.decision
    return None if d is None else (d.decision, d.rule, d.decided_by)


def plain(widget: Any) -> str:
    """The text a Static-like widget shows."""
    visual = getattr(widget, "content", None)
    if visual is None:
        visual = widget.render()
    return getattr(visual, "plain", str(visual))


async def tap(pilot: Any, key: str) -> None:
    """Press a key without waiting for the app to go idle (a debate streaming in the
    background keeps it busy, and ``pilot.press`` would wait for the debate to end)."""
    pilot.app.simulate_key(key)
    await pilot.pause(0.01)


async def fill(pilot: Any, selector: str, text: str) -> None:
    """Type into an Input on the active screen (by value, not waiting for idle)."""
    from textual.widgets import Input

    widget = pilot.app.screen.query_one(selector, Input)
    widget.focus()
    widget.value = text
    await pilot.pause(0.01)


# ------------------------------------------------- verification protocol specs
EXAMPLES = Path(__file__).resolve().parents[2] / "sessions" / "examples"
PLAN = "Stage it: 1% of clients for a day, then 10%. Dual-accept cookies and tokens."
RUBRIC = {
    "properties": [
        {
            "id": "rollback",
            "question": "Does the plan include a rollback path?",
            "admissible": ["artifact_quote"],
        },
        {
            "id": "staged",
            "question": "Is the rollout staged?",
            "admissible": ["artifact_quote", "transcript_quote", "test_result"],
        },
    ]
}


def _example(name: str, token_delay_ms: float = 0.0) -> dict[str, Any]:
    """A shipped scripted example, with its streaming delay replaced."""
    import tomllib

    spec = tomllib.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    for d in spec["debaters"]:
        script = d.get("script", {})
        script.pop("token_delay_ms", None)
        if token_delay_ms:
            script["token_delay_ms"] = token_delay_ms
    return spec


def challenge_spec(
    *, max_rounds: int = 3, mode: str = "blocking", token_delay_ms: float = 0.0
) -> dict[str, Any]:
    """sessions/examples/scripted-challenge.toml: a critical and a minor challenge,
    a defense, then (round 2) no objections. ``max_rounds = 1`` leaves the critical
    challenge unresolved and hands the decision to the operator."""
    spec = _example("scripted-challenge.toml", token_delay_ms)
    spec["debate"]["max_rounds"] = max_rounds
    spec["debate"]["mode"] = mode
    return spec


def refine_spec(token_delay_ms: float = 0.0) -> dict[str, Any]:
    """sessions/examples/scripted-refine.toml: three judges, convergence after 2 wins."""
    return _example("scripted-refine.toml", token_delay_ms)


def rubric_spec(answers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An adversary whose critic answers an evidence rubric; by default one quote is
    not in the plan, so that property is forced to ``no`` and the release escalates."""
    if answers is None:
        answers = [
            {
                "property": "rollback",
                "rationale": "The plan says rollback is instant.",
                "verdict": "yes",
                "evidence": [
                    {"kind": "artifact_quote", "quote": "instant rollback button"},
                    {"kind": "assertion", "quote": "It clearly can roll back."},
                ],
            },
            {
                "property": "staged",
                "rationale": "Two stages with a day between them.",
                "verdict": "yes",
                "evidence": [{"kind": "artifact_quote", "quote": "1% of clients for a day"}],
            },
        ]
    return {
        "debate": {
            "title": "Cookie-to-token migration plan",
            "motion": "Write a rollout plan.",
            "protocol": "adversary",
            "proposer": "author",
            "critic": "critic",
            "max_rounds": 1,
        },
        "debaters": [
            {"id": "author", "model": "scripted", "family": "fam-a", "script": {"stances": [PLAN]}},
            {
                "id": "critic",
                "model": "scripted",
                "family": "fam-b",
                "script": {"routings": ["release"], "turns": [{"rubric": answers}]},
            },
        ],
        "rubric": RUBRIC,
    }


async def quit_confirmed(pilot: Any) -> None:
    """``q`` on a running debate, then ``y`` once the question is on screen."""
    from tui.app.screens.modals import ConfirmModal

    await tap(pilot, "q")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ConfirmModal))
    await tap(pilot, "y")
    # Quitting runs a frame later; leaving the test first would lose the exit code.
    await wait_until(pilot, lambda: pilot.app.return_value is not None)


async def confirm_guard(pilot: Any) -> None:
    """Answer yes to the question a destructive key asks: Tab to its button, then Enter."""
    from tui.app.screens.modals import GuardModal

    await wait_until(pilot, lambda: isinstance(pilot.app.screen, GuardModal))
    await tap(pilot, "tab")
    await tap(pilot, "enter")
