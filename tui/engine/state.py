"""What the engine knows mid-debate, kept bounded by the number of debaters."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from tui.engine import tally as tally_rules
from tui.engine.records import Turn
from tui.engine.vocab import DecidedBy, DecisionRule, TurnKind

if TYPE_CHECKING:  # spec.py reads the protocol registry, which imports this module
    from tui.engine.spec import Spec

MAX_NOTES_SHOWN = 5


@dataclass(slots=True)
class Decision:
    """How a debate ended: the outcome (a vote or ``escalate``), by which rule, by whom."""

    decision: str
    rule: DecisionRule
    decided_by: DecidedBy = DecidedBy.RULE
    rationale: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class DebateState:
    """Latest position and vote per debater, critiques per target, operator notes."""

    spec: Spec
    max_rounds: int
    turns: list[Turn] = field(default_factory=list)
    latest_position: dict[str, Turn] = field(default_factory=dict)
    critiques_of: dict[str, dict[str, Turn]] = field(default_factory=dict)
    latest_vote: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    speaker_turns: dict[str, int] = field(default_factory=dict)
    phase_sequence: list[str] = field(default_factory=list)
    round: int = 0
    phase: str = ""

    def add(self, turn: Turn) -> None:
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
            turns=list(self.turns),
            latest_position=dict(self.latest_position),
            critiques_of={target: dict(by) for target, by in self.critiques_of.items()},
            latest_vote=dict(self.latest_vote),
            speaker_turns=dict(self.speaker_turns),
            phase_sequence=list(self.phase_sequence),
        )

    def tally(self) -> dict[str, int]:
        return tally_rules.count(self.latest_vote, self.spec.debate.votes)

    def recent_notes(self) -> list[tuple[int, str]]:
        start = max(0, len(self.notes) - MAX_NOTES_SHOWN)
        return [(i + 1, self.notes[i]) for i in range(start, len(self.notes))]
