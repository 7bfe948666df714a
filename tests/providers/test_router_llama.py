"""Many model servers, for real: a debater's ``api_base`` lists two llama.cpp servers.

LiteLLM's Router inside moot (no proxy) spreads the debaters' calls over two
standalone llama.cpp servers on loopback. Both must serve turns, and a server
killed once the first turn commits must lose no turn: the session holds every
scheduled turn and passes ``moot verify``. One debate shows both: the server that
served the first turn is the one killed, and the other serves the rest. (The
Router's random spread when no server fails is its own logic, tested over fake
servers in test_router.py; twelve real calls to see it cost 90 s a run.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import assert_judged, run_live
from tests.llama_server import Kill, LlamaServer
from tests.providers.test_litellm_proxy import _raw
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.engine.run.events import Event, TurnCompleted
from tui.providers.registry import provider_for

# ./dev.sh test: one worker runs the standalone servers' tests, another the embedded model's
# (each model runs one thread), so the two chains of real-model calls run side by side. The
# debaters reach these servers through LiteLLM: the group is the one that loads it.
pytestmark = [pytest.mark.local_model, pytest.mark.xdist_group("litellm")]

PER_ROUND = (4, 8)  # turns a round: two llama.cpp debaters in two phases; with the scripted two


def _spec(llama_servers: list[LlamaServer], rounds: int) -> dict[str, Any]:
    """The proxy test's debate, each model debater pointing at both servers itself."""
    raw = _raw("unused", rounds=rounds)
    for debater in raw["debaters"]:
        if debater["model"] != "scripted":
            debater["api_base"] = [s.api_base for s in llama_servers]
            del debater["api_key_env"]  # llama.cpp checks no key
    return raw


def _check(live: LiveSession, rounds: int) -> None:
    """Every scheduled turn recorded: a provider failure would end the run early, escalated.

    Whether a 135M model's answer is valid is not the Router's concern: only that it came
    back under the engine's schema and was judged.
    """
    engine = live.engine
    assert engine.decision is not None and engine.decision.rule == "max_rounds_exhausted"
    played = [t for t in engine.state.turns if t.model != "scripted"]
    assert len(played) == PER_ROUND[0] * rounds
    assert_judged(engine.state.turns, engine.spec, engine.decision.rule)
    assert len(load_session(live.path).turns) == PER_ROUND[1] * rounds  # no turn lost
    assert verify_file(live.path).ok


def test_a_server_killed_after_the_first_turn_loses_no_turn(
    llama_servers: list[LlamaServer], tmp_path: Path
) -> None:
    """Earns its time (four calls on a real model): a real llama.cpp process killed while the
    Router holds it; the fake servers of test_router.py cannot die mid-generation. Both
    servers serve: the killed one had served a turn, the survivor serves the rest."""
    kills: list[Kill] = []

    def kill_the_busier_server(event: Event) -> None:
        if kills or not isinstance(event, TurnCompleted) or event.turn.model == "scripted":
            return
        kills.append(Kill(llama_servers))

    raw = _spec(llama_servers, rounds=1)
    live = asyncio.run(
        run_live(raw, provider_for, tmp_path / "killed.toml", kill_the_busier_server)
    )
    assert kills
    _check(live, rounds=1)
    kills[0].assert_both_served()
