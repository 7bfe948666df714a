"""What the engine knows mid-debate, kept bounded by the number of debaters."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, overload

from tui.engine.basics.vocab import DecidedBy, TurnKind
from tui.engine.core import tally as tally_rules
from tui.engine.core.records import Turn

if TYPE_CHECKING:  # a type in signatures only
    from tui.engine.terms.spec import Spec

MAX_NOTES_SHOWN = 5


@dataclass(slots=True)
class Decision:
    """How a debate ended: the outcome (a vote or ``escalate``), by which rule, by whom."""

    decision: str
    rule: str  # a DecisionRule, or a rule its protocol names (Protocol.rule_reasons)
    decided_by: DecidedBy = DecidedBy.RULE
    rationale: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class TurnsSoFar(Sequence[Turn]):
    """The first ``count`` turns of a list that goes on growing, without a copy of them:
    a parallel phase's view stays O(1) however long the debate (a copy per phase was
    O(n²) over a long session)."""

    __slots__ = ("_turns", "_count")

    def __init__(self, turns: list[Turn], count: int) -> None:
        self._turns = turns
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> Turn: ...

    @overload
    def __getitem__(self, index: slice) -> list[Turn]: ...

    def __getitem__(self, index: int | slice) -> Turn | list[Turn]:
        if isinstance(index, slice):
            return self._turns[: self._count][index]
        if not -self._count <= index < self._count:
            raise IndexError("turn index out of range")
        return self._turns[index % self._count]

    def __iter__(self) -> Iterator[Turn]:
        turns = self._turns
        return (turns[i] for i in range(self._count))

    def __reversed__(self) -> Iterator[Turn]:
        turns = self._turns
        return (turns[i] for i in range(self._count - 1, -1, -1))


@dataclass
class DebateState:
    """Latest position and vote per debater, critiques per target, operator notes."""

    spec: Spec
    max_rounds: int
    turns: Sequence[Turn] = field(default_factory=list)  # a frozen view's: TurnsSoFar
    latest_position: dict[str, Turn] = field(default_factory=dict)
    critiques_of: dict[str, dict[str, Turn]] = field(default_factory=dict)
    latest_vote: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    speaker_turns: dict[str, int] = field(default_factory=dict)
    phase_sequence: list[str] = field(default_factory=list)
    round: int = 0
    phase: str = ""

    def add(self, turn: Turn) -> None:
        assert isinstance(self.turns, list), "a frozen view takes no turns"
        self.turns.append(turn)
        if turn.invalid:
            return
        if turn.kind == TurnKind.POSITION:
            self.latest_position[turn.speaker] = turn
        elif turn.target is not None:
            self.critiques_of.setdefault(turn.target, {})[turn.speaker] = turn
        if turn.vote:
            self.latest_vote[turn.speaker] = turn.vote

    def frozen_turns(self) -> DebateState:
        """This state's turns as they stand now, its notes still shared and growing.

        A parallel phase's calls all see the debate as it stood when the phase
        began, so a turn's view depends on the schedule, never on which turns
        of its phase were written first (or were on disk when a run resumed).
        """
        return replace(
            self,
            turns=TurnsSoFar(self.turns, len(self.turns))
            if isinstance(self.turns, list)
            else self.turns,
            latest_position=dict(self.latest_position),
            critiques_of={target: dict(by) for target, by in self.critiques_of.items()},
            latest_vote=dict(self.latest_vote),
            speaker_turns=dict(self.speaker_turns),
            # phase_sequence is shared: it grows only between phases, when the view is dropped
        )

    def tally(self) -> dict[str, int]:
        return tally_rules.count(self.latest_vote, self.spec.debate.vote_options)

    def recent_notes(self) -> list[tuple[int, str]]:
        start = max(0, len(self.notes) - MAX_NOTES_SHOWN)
        return [(i + 1, self.notes[i]) for i in range(start, len(self.notes))]
