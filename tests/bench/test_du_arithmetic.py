"""``bench/du_arithmetic.py``: its arguments parse, and it runs every arm end to end against
an OpenAI-compatible server on loopback, as a GPU owner's vLLM would be."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from aiohttp import web

from tests.fake_openai import FakeOpenAI, Reply, _completion
from tui.bench.tasks import Arithmetic
from tui.engine.record.verify import verify_file
from tui.exitcodes import ExitCode

# One worker loads LiteLLM (7 s of CPU a process), the one running this group:
# tests/conftest.py fails a test outside it that uses LiteLLM.
pytestmark = pytest.mark.xdist_group("litellm")

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "du_arithmetic.py"
QUESTION = re.compile(r"What is the result of ([0-9+*-]+)\?")


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("du_arithmetic", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Calculates(FakeOpenAI):
    """A server that works the sum out: every answer is right, so every arm should be."""

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append({"body": body})
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        found = QUESTION.search(prompt)
        assert found is not None, prompt
        total = eval(found.group(1))  # noqa: S307 - digits and + - * only
        text = json.dumps(
            {"stance": f"It is {total}.", "rationale": "Worked out.", "vote": str(total)}
        )
        model = body.get("model", "fake")
        if body.get("stream"):
            return await self._stream(request, model, Reply(text), body)
        return web.json_response(_completion(model, text, body))


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    running = Calculates().start()
    try:
        yield running
    finally:
        running.stop()


def test_the_arguments_parse_with_du_et_al_s_defaults() -> None:
    du = load()
    args = du.parse(["--api-base", "http://127.0.0.1:8000/v1"])
    assert (args.items, args.seeds, args.model) == (100, [0, 1, 2], "openai/qwen2.5-7b-instruct")
    argv = du.command(args, 1)
    assert argv[:2] == ["bench", "--task"] and "--json" in argv
    assert argv[argv.index("--seed") + 1] == "1"
    assert argv[argv.index("--arms") + 1] == "single,vote,debate,adaptive"
    assert argv[argv.index("--out") + 1] == str(Path("runs/du-arithmetic") / "seed-1")
    assert argv[argv.index("--api-base") + 1] == "http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "--api-base"),
        (["--api-base", "http://x/v1", "--seeds", "a,b"], "--seeds: expected whole numbers"),
        (["--api-base", "http://x/v1", "--items", "0"], "--items and --concurrency at least 1"),
    ],
)
def test_bad_arguments_exit_2_with_one_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        load().parse(argv)
    assert stop.value.code == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_two_items_run_end_to_end_against_a_server_on_loopback(
    tmp_path: Path, server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    du = load()
    out = tmp_path / "du"
    argv = ["--api-base", server.base_url, "--items", "2", "--seeds", "0,1", "--out", str(out)]
    assert du.main([*argv, "--json"]) == ExitCode.DECIDED
    captured = capsys.readouterr()
    figures: dict[str, Any] = json.loads(captured.out)
    assert captured.err.count("moot bench --task arithmetic --items 2") == 2  # each seed's command
    for seed in ("0", "1"):
        arms = figures["seeds"][seed]["arms"]
        assert all(arms[a]["accuracy"] == 1.0 and arms[a]["items"] == 2 for a in du.ARMS)
        calls = {a: arms[a]["calls"] for a in du.ARMS}
        assert calls == {"single": 2, "vote": 6, "debate": 12, "adaptive": 6}  # 3 agree at once
    assert server.calls == 2 * 26
    assert figures["mean"] == {a: 1.0 for a in du.ARMS}
    questions = {r["body"]["messages"][-1]["content"] for r in server.requests}
    assert any(Arithmetic(1).item(0).question in q for q in questions)  # seed 1's own items
    for path in (out / "seed-0" / "sessions").glob("*.toml"):
        assert verify_file(path).ok, path

    assert du.main(argv) == ExitCode.DECIDED  # rerun: every seed resumes, no call made
    table = capsys.readouterr().out
    assert server.calls == 2 * 26
    assert "adaptive" in table and "Du et al. 2023" in table
