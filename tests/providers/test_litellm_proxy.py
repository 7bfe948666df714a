"""A LiteLLM proxy in front of two llama.cpp servers, as a real deployment runs it.

The proxy is LiteLLM's own (``litellm --config``), installed by ./dev.sh into
``.venv-proxy`` (its ``litellm[proxy]`` extra pins rich below 14, which the
console's Textual cannot use, so it lives in its own environment, as a proxy
does in production). Its config routes one model name to two llama.cpp servers
on loopback; debaters point ``api_base`` at the proxy. Turns must be answered, both
servers must serve some, and a server killed mid-debate must lose no turn: one debate
shows all three, the server that served more of the first phase being the one killed.
(The proxy's random spread when no server fails is LiteLLM's own; seeing it by chance
took twelve real calls, 90 s a run.)
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_openai import free_port
from tests.helpers import assert_judged
from tests.llama_server import ROOT, Kill, LlamaServer
from tui.engine import Engine, validate_spec
from tui.engine.run.events import Event, TurnCompleted
from tui.providers.registry import close_all, provider_for

# ./dev.sh test: one worker runs the standalone servers' tests, another the embedded model's
# (each model runs one thread), so the two chains of real-model calls run side by side. The
# debaters reach these servers through LiteLLM: the group is the one that loads it.
pytestmark = [pytest.mark.local_model, pytest.mark.xdist_group("litellm")]

KEY_ENV = "MOOT_PROXY_KEY"  # debaters name it; the proxy's master key is its value
PROXY = Path(os.environ.get("MOOT_LITELLM_PROXY") or ROOT / ".venv-proxy" / "bin" / "litellm")
CONFIG = """
model_list:
  - model_name: smollm2
    litellm_params: {{model: openai/smollm2, api_base: "{a}", api_key: none, timeout: 300}}
  - model_name: smollm2
    litellm_params: {{model: openai/smollm2, api_base: "{b}", api_key: none, timeout: 300}}
router_settings:
  routing_strategy: simple-shuffle
  num_retries: 3
  allowed_fails: 0
  cooldown_time: 600
litellm_settings:
  telemetry: false
"""


def _ready(url: str) -> bool:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def proxy(
    llama_servers: list[LlamaServer], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    assert PROXY.is_file(), f"LiteLLM's proxy is not installed at {PROXY}: run ./dev.sh test"
    config = tmp_path_factory.mktemp("proxy") / "config.yaml"
    config.write_text(CONFIG.format(a=llama_servers[0].api_base, b=llama_servers[1].api_base))
    key = "sk-" + secrets.token_hex(24)
    env = {
        **os.environ,
        "LITELLM_MASTER_KEY": key,  # the proxy refuses to start open
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_LOG": "ERROR",
    }
    # Its bytecode in its own environment, which clones may share (./dev.sh links
    # .venv-proxy to one in the dev cache), not in this clone's: the next run starts from it.
    env.pop("PYTHONPYCACHEPREFIX", None)
    log = config.with_name("proxy.log")
    # It needs its port before it binds, and any socket on the machine may take a port
    # picked free before then: a proxy that says so is started again on another.
    for attempt in range(3):
        port = free_port()
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [str(PROXY), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=out,
            )
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 600  # it bounds a failure: a loaded machine took 180 s
        while not _ready(base + "/health/liveliness") and proc.poll() is None:
            assert time.monotonic() < deadline, "the LiteLLM proxy did not come up within 600 s"
            time.sleep(0.5)
        if proc.poll() is None:
            break
        said = log.read_text(errors="replace")
        assert "address already in use" in said.lower() and attempt < 2, (
            "the LiteLLM proxy exited at start:\n" + said[-2000:]
        )
    with pytest.MonkeyPatch.context() as env_patch:
        env_patch.setenv(KEY_ENV, key)
        yield base + "/v1"
    proc.terminate()
    proc.wait(timeout=30)


def _raw(api_base: str, rounds: int) -> dict[str, Any]:
    debater = {
        "model": "openai/smollm2",
        "api_base": api_base,
        "api_key_env": KEY_ENV,
        # The model is not under test here, the serving is: a turn's time is its tokens, so
        # few. An answer cut short is refused on record, a turn played all the same.
        "max_tokens": 48,
        "temperature": 0.2,
        "timeout_s": 300,
    }
    return {
        "debate": {
            "title": "Through the proxy",
            "motion": "Ship the database migration tonight without a rollback check.",
            "votes": ["ship", "hold", "rethink", "abstain"],
            "phases": ["proposal", "critique"],
            "max_rounds": rounds,
            "consensus_threshold": 4,  # two scripted voters who differ keep every round going
            "on_invalid": "continue",  # and so does a refused answer: every turn is played
            "retries": 0,  # one call a turn, so the counts below are calls
        },
        "debaters": [
            {"id": "planner", "role": "Argues for shipping now.", **debater},
            {"id": "skeptic", "role": "Looks for what can fail.", **debater},
            {"id": "abstainer", "model": "scripted", "script": {"votes": ["abstain"]}},
            {"id": "holder", "model": "scripted", "script": {"votes": ["hold"]}},
        ],
    }


def _assert_played(engine: Engine, turns: int) -> None:
    """Every scheduled turn answered through the proxy under the engine's schema; whether
    a 135M model's answer is valid is not the proxy's concern, only that it was judged."""
    assert engine.decision is not None and engine.decision.rule == "max_rounds_exhausted"
    played = [t for t in engine.state.turns if t.model != "scripted"]
    assert len(played) == turns
    valid = assert_judged(engine.state.turns, engine.spec, engine.decision.rule)
    assert all(t.vote in engine.spec.debate.votes for t in valid)


async def test_a_server_killed_mid_debate_loses_no_turn(
    llama_servers: list[LlamaServer], proxy: str
) -> None:
    """Earns its time (four calls on a real model): the failover under test is the proxy's,
    when a real server process dies mid-debate; a scripted model has no server to kill."""
    engine = Engine(validate_spec(_raw(proxy, rounds=1)), provider_for)
    kills: list[Kill] = []

    def kill_after_the_first_phase(event: Event) -> None:
        """Killed as the third turn commits: the critique phase is still to play."""
        if kills or not isinstance(event, TurnCompleted) or event.turn.index < 3:
            return
        kills.append(Kill(llama_servers))

    engine.subscribe(kill_after_the_first_phase)
    try:
        await engine.run()
    finally:
        await close_all(stop_local_model=False)
    assert kills
    _assert_played(engine, turns=4)
    kills[0].assert_both_served()
