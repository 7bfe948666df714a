"""A parallel phase's view of the debate: the turns as they stood, and no copy of them.

Each parallel phase freezes the state its calls share. A copy of the turn list per
phase made a long session O(n²) to run, resume and verify; the view is a prefix of
the one list, so freezing costs the same at turn 10 and at turn 10,000.
"""

from __future__ import annotations

import tracemalloc

import pytest

from tests.helpers import debate_raw
from tui.engine.basics.vocab import TurnKind
from tui.engine.core.records import Turn
from tui.engine.core.state import DebateState
from tui.engine.specs.spec import validate_spec

SPEC = validate_spec(debate_raw({"a": ["release"], "b": ["revise"]}))


def _turn(index: int) -> Turn:
    speaker = "ab"[index % 2]
    return Turn(
        index=index,
        round=1,
        phase="proposal",
        speaker=speaker,
        kind=TurnKind.POSITION,
        model="scripted",
        family="scripted",
        vote=["release", "revise"][index % 2],
    )


def _state(turns: int) -> DebateState:
    state = DebateState(SPEC, SPEC.max_rounds)
    for i in range(1, turns + 1):
        state.add(_turn(i))
    return state


def test_a_frozen_view_keeps_the_turns_as_they_stood() -> None:
    state = _state(3)
    view = state.frozen_turns()
    state.add(_turn(4))
    state.add(_turn(5))
    assert len(state.turns) == 5
    assert len(view.turns) == 3
    assert [t.index for t in view.turns] == [1, 2, 3]
    assert [t.index for t in reversed(view.turns)] == [3, 2, 1]
    assert view.turns[-1].index == 3 and view.turns[0].index == 1
    assert [t.index for t in view.turns[1:]] == [2, 3]
    assert state.turns[4] not in view.turns
    with pytest.raises(IndexError):
        view.turns[3]
    assert view.latest_vote == {"a": "release", "b": "revise"}
    with pytest.raises(AssertionError):
        view.add(_turn(6))  # a view is read, never written


def test_freezing_a_long_debate_copies_no_turn() -> None:
    """The bytes one freeze allocates do not grow with the turns (a list copy would be
    8 bytes a turn: 80 kB at 10,000)."""

    def allocated(turns: int) -> int:
        state = _state(turns)
        tracemalloc.start()
        try:
            view = state.frozen_turns()
            size, _peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert len(view.turns) == turns
        return size

    small, large = allocated(10), allocated(10_000)
    assert large < small + 8 * 1_000, (small, large)
