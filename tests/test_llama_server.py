"""moot against a llama.cpp server it did not start: ``openai/smollm2`` at an ``api_base``.

The server is its own process (tests/llama_server.py), reached only over HTTP
through LiteLLM, as any self-hosted OpenAI-compatible server is. Every model
turn must be valid and every vote one of the spec's: the engine's schema is
what holds a 135M model to them, not a provider written for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers import small_model_challenge
from tests.llama_server import LlamaServer
from tui.engine import Engine, validate_spec
from tui.providers.registry import close_all, provider_for

pytestmark = pytest.mark.local_model

MOTION = "Ship the database migration tonight without a rollback check."
VOTES = ["ship", "hold", "rethink"]


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    srv = LlamaServer(slots=3, threads=2)
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


def _all_valid(engine: Engine) -> None:
    turns = engine.state.turns
    assert turns, "no turn was played"
    for t in turns:
        assert t.invalid is False, f"{t.speaker} {t.phase}: {t.error} / {t.raw!r}"
        assert t.model == "openai/smollm2" and t.tokens_out > 0
        assert t.structured == "json_schema"  # the server took the engine's schema
    assert engine.decision is not None
    assert engine.decision.rule not in ("invalid_turn", "provider_failure")


async def test_debate_on_a_standalone_server(server: LlamaServer) -> None:
    raw = {
        "debate": {
            "title": "Standalone debate",
            "motion": MOTION,
            "votes": VOTES,
            "phases": ["proposal", "critique", "consensus"],
            "max_rounds": 1,
        },
        "debaters": [
            _debater(server, "planner", "Argues for shipping now."),
            _debater(server, "skeptic", "Looks for what can fail."),
            _debater(server, "oncall", "Speaks for the on-call team."),
        ],
    }
    engine = await _run(raw)
    _all_valid(engine)
    votes = [t.vote for t in engine.state.turns if t.kind in ("position", "critique")]
    assert votes and all(v in VOTES for v in votes)


async def test_adversary_on_a_standalone_server(server: LlamaServer) -> None:
    raw = {
        "debate": {
            "title": "Standalone adversary",
            "motion": MOTION,
            "protocol": "adversary",
            "proposer": "author",
            "critic": "critic",
            "max_rounds": 1,
        },
        "debaters": [
            _debater(server, "author", "Writes the rollout plan."),
            {**_debater(server, "critic", "Finds the plan's flaws."), "family": "reviewers"},
        ],
    }
    engine = await _run(raw)
    _all_valid(engine)
    critiques = [t for t in engine.state.turns if t.kind == "adversary_critique"]
    assert critiques and all(t.vote in ("release", "revise", "escalate") for t in critiques)


async def test_challenge_on_a_standalone_server(server: LlamaServer) -> None:
    raw = {
        "debate": small_model_challenge("Standalone challenge"),
        "debaters": [
            _debater(server, "owner", "Owns the cache plan."),
            {**_debater(server, "reviewer", "Challenges the plan."), "family": "reviewers"},
        ],
    }
    engine = await _run(raw)
    _all_valid(engine)
    turns = engine.state.turns
    assert turns[0].kind == "challenge_report"
    if len(turns) >= 3:  # round 2 assessed exactly round 1's challenges, by id
        assessed = {a["challenge_id"] for a in turns[2].content["assessments"]}
        assert assessed == set(turns[0].derived.get("challenge_ids", []))
