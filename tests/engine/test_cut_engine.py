"""Cutting a turn: the call stops at once, the partial text and the cut are journalled,
then the operator's choice (redo after a note, skip, replace the model) is carried out
and replayed on resume."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import debate_raw
from tui.cli import main
from tui.engine import validate_spec
from tui.engine.basics.vocab import OperatorAction
from tui.engine.record.live import LiveSession
from tui.engine.record.session import load_session
from tui.engine.run.events import Event, TokenReceived, TurnCompleted, TurnStarted
from tui.engine.run.runner import Engine
from tui.engine.run.turns import CutAction, CutChoice
from tui.exitcodes import ExitCode
from tui.providers.scripted import ScriptedProvider

PACED = ScriptedProvider(paced=True)  # as the console has it: a call streams long enough to cut


def raw_spec(**debate: Any) -> dict[str, Any]:
    raw = debate_raw({"a": ["release"], "b": ["release"]}, max_rounds=1, **debate)
    for d in raw["debaters"]:
        d["script"]["token_delay_ms"] = 4  # a call streams long enough to be cut
    return raw


class Cutter:
    """Cuts when ``speaker``'s turn ``index`` has streamed ``after`` tokens, then answers."""

    def __init__(
        self,
        engine: Engine,
        index: int,
        choice: CutChoice,
        speaker: str | None = None,
        after: int = 3,
    ) -> None:
        self.engine, self.index, self.choice = engine, index, choice
        self.speaker, self.after = speaker, after
        self.tokens: list[str] = []
        self.cut: list[Any] = []
        self.waiting: list[Any] = []
        self.late_tokens = 0  # tokens of the cut call that arrived after the cut

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnStarted) and event.slot.index == self.index and self.cut:
            self.cut.append("restarted")
        if not isinstance(event, TokenReceived) or event.slot.index != self.index:
            return
        if self.cut and "restarted" not in self.cut:
            self.late_tokens += 1
        if self.cut:
            return
        self.tokens.append(event.text)
        if len(self.tokens) == self.after:
            self.cut = self.engine.cut(self.speaker)
            asyncio.get_running_loop().call_soon(self._answer)

    def _answer(self) -> None:
        self.waiting = list(self.engine.awaiting_cut)
        self.engine.answer_cut(self.choice)


def play(
    tmp_path: Path, raw: dict[str, Any], make: Callable[[Engine], Cutter]
) -> tuple[Cutter, Path]:
    path = tmp_path / "cut.toml"
    session = LiveSession.start(validate_spec(raw), raw, lambda d: PACED, out=path)
    cutter = make(session.engine)
    session.engine.subscribe(cutter)
    try:
        asyncio.run(session.engine.run())
    finally:
        session.close()
    return cutter, path


def test_a_cut_is_journalled_with_its_partial_text_and_redone_after_a_note(
    tmp_path: Path,
) -> None:
    choice = CutChoice(CutAction.REDO, note="Name the rollback first.")
    cutter, path = play(tmp_path, raw_spec(parallel=False), lambda e: Cutter(e, 2, choice))
    assert [s.index for s in cutter.cut[:1]] == [2] and cutter.late_tokens == 0
    assert [s.index for s in cutter.waiting] == [2]  # it waited for the operator
    data = load_session(path)
    cut, note, redo = data.actions  # the answer to the cut is on record too
    assert cut["action"] == OperatorAction.CUT and cut["turn"] == 2 and cut["speaker"] == "b"
    assert (redo["action"], redo["turn"], redo["speaker"]) == (OperatorAction.REDO, 2, "b")
    assert cut["partial"] == "".join(cutter.tokens) and cut["after_turn"] == 1
    assert note["action"] == OperatorAction.NOTE and note["text"] == "Name the rollback first."
    redone = data.turns[1]
    assert redone.speaker == "b" and not redone.invalid
    assert any(label.startswith("note:") for label in redone.saw)  # the redo saw the note
    assert main(["verify", str(path)]) == ExitCode.DECIDED


def test_a_plain_redo_is_journalled_and_verified(tmp_path: Path) -> None:
    """Redo with no note used to leave the cut unanswered on record."""
    cutter, path = play(
        tmp_path, raw_spec(parallel=False), lambda e: Cutter(e, 2, CutChoice(CutAction.REDO))
    )
    data = load_session(path)
    assert [a["action"] for a in data.actions] == [OperatorAction.CUT, OperatorAction.REDO]
    assert data.actions[1]["turn"] == 2 and not data.turns[1].invalid
    assert main(["verify", str(path)]) == ExitCode.DECIDED


def test_a_skipped_cut_keeps_the_partial_text_as_an_invalid_turn(tmp_path: Path) -> None:
    raw = raw_spec(parallel=False, on_invalid="continue")
    cutter, path = play(tmp_path, raw, lambda e: Cutter(e, 2, CutChoice(CutAction.SKIP)))
    data = load_session(path)
    skipped = data.turns[1]
    assert skipped.invalid and skipped.raw == "".join(cutter.tokens)
    assert skipped.error == "cut by the operator and skipped"
    assert [a["action"] for a in data.actions] == [OperatorAction.CUT, OperatorAction.SKIP]
    assert data.result is not None and len(data.turns) > 2  # the debate went on
    assert main(["verify", str(path)]) == ExitCode.DECIDED


def test_a_cut_turn_goes_again_on_another_model(tmp_path: Path) -> None:
    choice = CutChoice(CutAction.REPLACE, model="scripted")
    raw = raw_spec(parallel=False)
    raw["debaters"][1]["script"]["stances"] = ["b's scripted stance."]
    cutter, path = play(tmp_path, raw, lambda e: Cutter(e, 2, choice))
    data = load_session(path)
    assert [a["action"] for a in data.actions] == [OperatorAction.CUT, OperatorAction.REPLACE_MODEL]
    assert data.turns[1].content["stance"] != "b's scripted stance."  # the new model's answer
    assert main(["verify", str(path)]) == ExitCode.DECIDED


def test_cutting_every_turn_of_a_phase(tmp_path: Path) -> None:
    cutter, path = play(
        tmp_path, raw_spec(parallel=True), lambda e: Cutter(e, 1, CutChoice(CutAction.REDO))
    )
    assert sorted(s.index for s in cutter.cut if s != "restarted") == [1, 2]
    data = load_session(path)
    cuts = [a for a in data.actions if a["action"] == OperatorAction.CUT]
    assert sorted((a["turn"], a["speaker"]) for a in cuts) == [(1, "a"), (2, "b")]
    assert not any(t.invalid for t in data.turns)
    assert main(["verify", str(path)]) == ExitCode.DECIDED


def test_a_cut_and_its_skip_are_replayed_on_resume(tmp_path: Path) -> None:
    raw = raw_spec(parallel=False, on_invalid="continue")
    path = tmp_path / "cut.toml"
    session = LiveSession.start(validate_spec(raw), raw, lambda d: PACED, out=path)
    cutter = Cutter(session.engine, 2, CutChoice(CutAction.SKIP))
    session.engine.subscribe(cutter)

    async def killed_after_turn_3() -> None:
        task = asyncio.ensure_future(session.engine.run())

        def kill(event: Event) -> None:
            if isinstance(event, TurnCompleted) and event.turn.index == 3:
                task.cancel()  # the process dies here

        session.engine.subscribe(kill)
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(killed_after_turn_3())
    finally:
        session.close()
    assert load_session(path).result is None
    assert main(["resume", str(path), "--headless"]) in (ExitCode.DECIDED, ExitCode.UNRESOLVED)
    data = load_session(path)
    assert [a["action"] for a in data.actions] == [OperatorAction.CUT, OperatorAction.SKIP]
    assert data.turns[1].invalid and data.turns[1].raw == "".join(cutter.tokens)
    assert data.result is not None
    assert main(["verify", str(path)]) == ExitCode.DECIDED


def test_nothing_to_cut_and_bad_choices() -> None:
    spec = validate_spec(raw_spec())
    engine = Engine(spec, lambda d: PACED)

    async def idle() -> list[Any]:
        return engine.cut()

    assert asyncio.run(idle()) == [] and engine.awaiting_cut == []
    with pytest.raises(ValueError):
        CutChoice(CutAction.REPLACE)
    with pytest.raises(ValueError):
        CutChoice(CutAction.SKIP, note="no")
