"""moot against a llama.cpp server it did not start: ``openai/smollm2`` at an ``api_base``.

The server is its own process (tests/llama_server.py), reached only over HTTP
through LiteLLM, as any self-hosted OpenAI-compatible server is. Every model
turn must come back under the engine's schema and every counted vote be one of
the spec's: the schema and the engine's checks hold a 135M model to them, not a
provider written for it. One debate plays that path; the other protocols play on the
same model in process (test_local_model.py), and their rules on scripted turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import LLAMA_THREADS
from tests.helpers import assert_judged
from tests.llama_server import LlamaServer
from tui.engine import Engine, validate_spec
from tui.engine.core.records import Turn
from tui.providers.registry import close_all, provider_for

# ./dev.sh test: one worker runs the standalone servers' tests, another the embedded model's
# (each model runs one thread), so the two chains of real-model calls run side by side. The
# debaters reach these servers through LiteLLM: the group is the one that loads it.
pytestmark = [pytest.mark.local_model, pytest.mark.xdist_group("litellm")]

MOTION = "Ship the database migration tonight without a rollback check."
VOTES = ["ship", "hold", "rethink"]


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    srv = LlamaServer(slots=3, threads=LLAMA_THREADS)
    yield srv
    srv.stop()


def _debater(server: LlamaServer, did: str, role: str) -> dict[str, Any]:
    return {
        "id": did,
        "model": "openai/smollm2",
        "api_base": server.api_base,
        "role": role,
        "max_tokens": 320,
        "temperature": 0.2,
        "timeout_s": 300,
    }


async def _run(raw: dict[str, Any]) -> Engine:
    engine = Engine(validate_spec(raw), provider_for)
    try:
        await engine.run()
    finally:
        await close_all(stop_local_model=False)
    return engine


def _judged(engine: Engine) -> list[Turn]:
    """Every turn answered under the engine's schema (the server took it) and judged; the
    valid ones. A refused answer escalates the debate at once, its reason on record."""
    assert engine.decision is not None and engine.decision.rule != "provider_failure"
    turns = engine.state.turns
    assert {t.model for t in turns} == {"openai/smollm2", "scripted"}
    valid = assert_judged(turns, engine.spec, engine.decision.rule)
    if any(t.invalid for t in turns):
        assert engine.decision.rule == "invalid_turn"
    return valid


async def test_debate_on_a_standalone_server(server: LlamaServer) -> None:
    """One model debater gives a position and a critique, each kind of turn once; two
    scripted voters who differ keep the votes apart, so only a refused answer ends it early.
    (Three model debaters played each path three times, nine calls; a consensus phase
    played the position path again, three calls where two show it.)"""
    raw = {
        "debate": {
            "title": "Standalone debate",
            "motion": MOTION,
            "votes": VOTES,
            "phases": ["proposal", "critique"],
            "max_rounds": 1,
            "consensus_threshold": 3,  # unanimity, which the two scripted voters never give
        },
        "debaters": [
            _debater(server, "planner", "Argues for shipping now."),
            {"id": "yes", "model": "scripted", "script": {"votes": ["ship"]}},
            {"id": "no", "model": "scripted", "script": {"votes": ["hold"]}},
        ],
    }
    engine = await _run(raw)
    valid = _judged(engine)
    assert all(t.vote in VOTES for t in valid if t.kind in ("position", "critique"))
    model = [(t.phase, t.kind) for t in engine.state.turns if t.model == "openai/smollm2"]
    whole = [("proposal", "position"), ("critique", "critique")]
    if engine.decision is not None and engine.decision.rule == "invalid_turn":
        assert model == whole[: len(model)]  # it stopped at the end of the refused turn's phase
    else:
        assert model == whole
