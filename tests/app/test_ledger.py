"""Each pane's ledger, live from the engine; a budget's end raised from the console."""

from __future__ import annotations

from typing import Any

from tests.app.app_support import (
    debate_spec,
    fill,
    live_screen,
    make_app,
    plain,
    session_file,
    tap,
    wait_until,
    write_spec,
)
from tui.app.screens.modals import BudgetModal, DecideModal
from tui.engine.core.ports import TokenSink, TurnReply, TurnRequest
from tui.engine.record.session import load_session
from tui.providers.scripted import ScriptedProvider

_SCRIPTED = ScriptedProvider(paced=True)  # as the console has it


class Priced:
    """A scripted debater whose every call costs a cent, with a known context window."""

    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        reply = await _SCRIPTED.complete(request, on_token)
        return TurnReply(
            reply.text, tokens_in=100, tokens_out=10, cost=0.01, extra={"context_window": 400}
        )

    async def aclose(self) -> None:
        return None


def _priced(_debater: Any) -> Priced:
    return Priced()


def _spec(**budget: float) -> dict[str, Any]:
    spec = debate_spec(debaters=2, max_rounds=3, scripts={1: {"votes": ["revise", "release"]}})
    if budget:
        spec["budget"] = budget
    return spec


async def test_each_pane_shows_its_ledger_after_every_call(tmp_path, moot_dirs):
    spec = debate_spec(debaters=2, phases=["proposal"])
    app = make_app(tmp_path, spec_path=str(write_spec(tmp_path, spec)), provider_for=_priced)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        screen = live_screen(app)
        await wait_until(pilot, lambda: screen.decision is not None)
        for speaker in ("planner", "critic"):
            meta = plain(screen.pane(speaker).query_one(".meta"))
            assert "110 tok · $0.010 · " in meta and "ctx 25%" in meta, meta
            assert screen.pane(speaker).ledger.calls == 1


async def test_a_budget_end_is_raised_from_the_console_and_the_debate_goes_on(tmp_path, moot_dirs):
    app = make_app(
        tmp_path,
        spec_path=str(write_spec(tmp_path, _spec(max_cost_usd=0.025))),
        provider_for=_priced,
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        screen = live_screen(app)
        modal = await wait_until(pilot, lambda: isinstance(app.screen, BudgetModal) and app.screen)
        assert modal.key == "budget.max_cost_usd" and modal.cap == 0.025
        assert len(screen.engine.state.turns) == 3  # the fourth call never started
        await fill(pilot, "#cap", "0.02")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: "must be higher" in plain(modal.query_one("#budget-error")))
        assert app.screen is modal  # a lower cap is refused in the modal, the words kept
        await fill(pilot, "#cap", "1")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: screen.decision is not None and app.screen is screen)
        assert screen.decision.rule != "budget_exhausted"
        assert len(screen.engine.state.turns) > 3
    data = load_session(session_file(moot_dirs))
    raised = [a for a in data.actions if a["action"] == "raise_budget"]
    assert [(a["cap"], a["value"]) for a in raised] == [("max_cost_usd", 1.0)]


async def test_a_budget_end_can_go_to_the_decision_instead(tmp_path, moot_dirs):
    app = make_app(
        tmp_path, spec_path=str(write_spec(tmp_path, _spec(max_tokens=200))), provider_for=_priced
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.debate_screen())
        await wait_until(pilot, lambda: isinstance(app.screen, BudgetModal))
        await tap(pilot, "tab")  # Raise → Decide
        await tap(pilot, "tab")
        await tap(pilot, "enter")
        await wait_until(pilot, lambda: isinstance(app.screen, DecideModal))
        assert "budget_exhausted" in plain(app.screen.query_one(".hint"))
