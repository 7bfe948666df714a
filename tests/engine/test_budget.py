"""Budgets: a call that would start past a cap is not made; the operator may raise it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SCRIPTED, debate_raw
from tui.cli import main
from tui.engine import validate_spec
from tui.engine.basics.vocab import DecisionRule, OperatorAction
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.run.events import Event, LedgerChanged
from tui.exitcodes import ExitCode

VOTES = {"a": ["release", "revise"], "b": ["revise", "release"]}  # never agree: 3 rounds


def write_spec(tmp_path: Path, budget: str = "", b_budget: str = "") -> Path:
    spec = tmp_path / "b.toml"
    spec.write_text(
        f"""[debate]
title = "Budget"
motion = "Adopt the outbox."
max_rounds = 3
{budget}
[[debaters]]
id = "a"
model = "scripted"
[debaters.script]
votes = {VOTES["a"]}
[[debaters]]
id = "b"
model = "scripted"
{b_budget}
[debaters.script]
votes = {VOTES["b"]}
"""
    )
    return spec


def run(tmp_path: Path, spec: Path) -> tuple[int, Any]:
    out = tmp_path / "s.toml"
    code = main(["run", str(spec), "--headless", "--out", str(out)])
    return code, load_session(out)


def test_a_session_cap_stops_the_run_before_the_call_past_it(tmp_path: Path) -> None:
    code, data = run(tmp_path, write_spec(tmp_path, "[budget]\nmax_tokens = 60"))
    assert code == ExitCode.UNRESOLVED
    result = data.result
    assert result["decision_rule"] == DecisionRule.BUDGET_EXHAUSTED
    assert result["budget_exhausted"] == "budget.max_tokens" and result["budget_cap"] == 60
    spent = [t.tokens_in + t.tokens_out for t in data.turns]
    assert sum(spent[:-1]) < 60 <= sum(spent)  # the last turn made crossed it; no call after
    assert result["budget_spent"] == sum(spent) == result["tokens"]
    assert main(["verify", str(data.path)]) == ExitCode.DECIDED


def test_a_debater_cap_stops_only_at_that_debaters_call(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, b_budget="[debaters.budget]\nmax_tokens = 20")
    code, data = run(tmp_path, spec)
    assert code == ExitCode.UNRESOLVED
    result = data.result
    assert result["budget_exhausted"] == "debaters.b.budget.max_tokens"
    assert result["budget_speaker"] == "b"
    b_turns = [t for t in data.turns if t.speaker == "b"]
    b_spent = [t.tokens_out for t in b_turns]
    assert sum(b_spent[:-1]) < 20 <= sum(b_spent)
    assert main(["verify", str(data.path)]) == ExitCode.DECIDED


class Priced:
    """A provider whose every call costs a cent, with a known context window."""

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        reply = await SCRIPTED.complete(request, on_token)
        return TurnReply(
            reply.text, tokens_in=100, tokens_out=10, cost=0.01, extra={"context_window": 400}
        )

    async def aclose(self) -> None:
        return None


def test_a_cost_cap_a_raise_and_the_ledger(tmp_path: Path) -> None:
    raw = debate_raw(VOTES, max_rounds=3, parallel=False)
    raw["budget"] = {"max_cost_usd": 0.025}
    spec = validate_spec(raw)
    session = LiveSession.start(spec, raw, lambda d: Priced(), out=tmp_path / "c.toml")
    events: list[Event] = []
    session.engine.subscribe(events.append)
    try:
        first = asyncio.run(session.engine.run())
        assert first.rule == DecisionRule.BUDGET_EXHAUSTED
        assert len(session.engine.state.turns) == 3  # 0.03 spent: the fourth call never started
        ledgers = [e for e in events if isinstance(e, LedgerChanged)]
        assert [e.speaker for e in ledgers] == ["a", "b", "a"]
        last = ledgers[-1].ledger
        assert last.tokens == 220 and last.cost == pytest.approx(0.02) and last.calls == 2
        assert last.last_latency_ms is not None and last.fullness == 0.25
        with pytest.raises(ValueError, match="must be higher"):
            session.engine.raise_budget("max_cost_usd", 0.02)
        session.engine.raise_budget("max_cost_usd", 1.0)
        assert session.store.result is None  # the escalation no longer holds
        second = asyncio.run(session.engine.run())
        assert second.rule == DecisionRule.MAX_ROUNDS_EXHAUSTED
        assert len(session.engine.state.turns) == 24  # three rounds of eight turns
    finally:
        session.close()
    data = load_session(tmp_path / "c.toml")
    raised = [a for a in data.actions if a["action"] == OperatorAction.RAISE_BUDGET]
    assert raised == [{**raised[0], "cap": "max_cost_usd", "value": 1.0, "after_turn": 3}]
    assert main(["verify", str(tmp_path / "c.toml")]) == ExitCode.DECIDED


def test_a_raise_recorded_before_a_crash_is_replayed_on_resume(tmp_path: Path) -> None:
    code, data = run(tmp_path, write_spec(tmp_path, "[budget]\nmax_tokens = 60"))
    session = LiveSession.resume(data.path, lambda d: SCRIPTED)
    try:
        asyncio.run(session.engine.run())  # replays to the cap, as the file says
        session.engine.raise_budget("max_tokens", 1000)
    finally:
        session.close()  # the process "dies" before going on
    assert main(["resume", str(data.path), "--headless"]) == ExitCode.UNRESOLVED
    data = load_session(data.path)
    assert data.result is not None
    assert data.result["decision_rule"] == DecisionRule.MAX_ROUNDS_EXHAUSTED
    assert len(data.turns) == 24
    assert main(["verify", str(data.path)]) == ExitCode.DECIDED


def test_a_forged_budget_claim_is_named(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    code, data = run(tmp_path, write_spec(tmp_path, "[budget]\nmax_tokens = 60"))
    text = data.path.read_text().replace("budget_cap = 60", "budget_cap = 600")
    data.path.write_text(text.replace("max_tokens = 60", "max_tokens = 600"))
    capsys.readouterr()
    assert main(["verify", str(data.path)]) == ExitCode.VERIFY_FAILED
    assert "result: budget_exhausted: budget.max_tokens: 66 spent of 600" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("budget", "named"),
    [
        ("[budget]\nmax_tokens = 0", "budget.max_tokens"),
        ("[budget]\nmax_cost_usd = -1.0", "budget.max_cost_usd"),
        ("[budget]\nmax_dollars = 3", "budget.max_dollars"),
    ],
)
def test_bad_budgets_exit_2_naming_the_key(
    tmp_path: Path,
    capsys,  # noqa: ANN001
    budget: str,
    named: str,
) -> None:
    out = tmp_path / "never.toml"
    spec = write_spec(tmp_path, budget)
    assert main(["run", str(spec), "--headless", "--out", str(out)]) == ExitCode.BAD_INPUT
    assert f"  - {named}:" in capsys.readouterr().err
    assert not out.exists()


def test_resume_headless_raises_a_cap_and_goes_on(tmp_path: Path) -> None:
    code, data = run(tmp_path, write_spec(tmp_path, "[budget]\nmax_tokens = 60"))
    stopped_at = len(data.turns)
    raise_it = ["resume", str(data.path), "--headless", "--raise-budget"]
    assert main([*raise_it, "budget.max_tokens=1000"]) == ExitCode.UNRESOLVED
    data = load_session(data.path)
    assert data.result is not None
    assert data.result["decision_rule"] == DecisionRule.MAX_ROUNDS_EXHAUSTED
    raised = [a for a in data.actions if a["action"] == OperatorAction.RAISE_BUDGET]
    assert [(a["cap"], a["value"], a["after_turn"]) for a in raised] == [
        ("max_tokens", 1000, stopped_at)
    ]
    assert main(["verify", str(data.path)]) == ExitCode.DECIDED


@pytest.mark.parametrize(
    "raise_it",
    ["budget.max_tokens=10", "budget.max_words=10", "debaters.nobody.budget.max_tokens=99"],
)
def test_a_bad_raise_is_refused_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raise_it: str
) -> None:
    code, data = run(tmp_path, write_spec(tmp_path, "[budget]\nmax_tokens = 60"))
    before = data.path.read_bytes()
    capsys.readouterr()
    code = main(["resume", str(data.path), "--headless", "--raise-budget", raise_it])
    assert code == ExitCode.BAD_INPUT
    assert "moot: --raise-budget:" in capsys.readouterr().err
    assert data.path.read_bytes() == before
