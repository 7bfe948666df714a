"""An ``openai/`` model at one ``api_base`` is called through the openai SDK and priced
from LiteLLM's cost map read as data: LiteLLM itself is never imported for it.

Importing LiteLLM took seconds, on the event loop, in the middle of the first call of
every ``moot batch``; the price it gave is the same as the map's.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from tests.fake_openai import FakeOpenAI, Reply
from tui.engine.record.session import load_session

# One worker loads LiteLLM (7 s of CPU a process), the one running this group:
# tests/conftest.py fails a test outside it that uses LiteLLM.
pytestmark = pytest.mark.xdist_group("litellm")

MODEL = "openai/gpt-4o-mini"  # priced in LiteLLM's map
USAGE = {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500}
PROBE = """
import atexit, json, runpy, sys
atexit.register(lambda: print(json.dumps({"litellm": "litellm" in sys.modules}), file=sys.stderr))
sys.argv = ["moot", *sys.argv[1:]]
runpy.run_module("tui", run_name="__main__")
"""


@pytest.mark.parametrize("model", [MODEL, "openai/no-such-model-anywhere"])
def test_an_openai_sdk_call_is_priced_without_importing_litellm(
    tmp_path: Path, fake: FakeOpenAI, model: str
) -> None:
    answer = {"stance": "Ship it.", "rationale": "Tested.", "vote": "release"}
    fake.default = Reply(json.dumps(answer), usage=USAGE)
    raw = {
        "debate": {
            "title": "Priced",
            "motion": "Ship it.",
            "max_rounds": 1,
            "phases": ["proposal"],
        },
        "debaters": [
            {"id": "solo", "model": model, "api_base": fake.base_url, "api_key_env": "MOOT_T_KEY"}
        ],
    }
    spec = tmp_path / "spec.toml"
    spec.write_text(tomli_w.dumps(raw))
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    out = tmp_path / "s.toml"
    import os

    env = {**os.environ, "MOOT_T_KEY": "sk-test-0123456789abcdef"}
    done = subprocess.run(
        [sys.executable, str(probe), "run", str(spec), "--headless", "--no-preflight"]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert json.loads(done.stderr.strip().splitlines()[-1]) == {"litellm": False}, done.stderr
    (turn,) = load_session(out).turns
    assert turn.client == "openai" and (turn.tokens_in, turn.tokens_out) == (1200, 300)

    from tui.providers.litellm_lib import litellm_lib  # here, in the test's process only

    try:
        cin, cout = litellm_lib().cost_per_token(
            model=model, prompt_tokens=1200, completion_tokens=300
        )
        expected = float(cin) + float(cout)
    except Exception:  # LiteLLM cannot price it: nor does moot
        expected = 0.0
    assert turn.cost == pytest.approx(expected)
    assert (turn.cost > 0) == (model == MODEL)
