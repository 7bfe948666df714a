"""A protocol written the way a contributor adds one: this module plus one registry entry.

``monologue``: the proposer states a position each round and votes on it; its
own vote decides. Small on purpose; tests/engine/test_protocols.py registers it, and
tests/app/test_protocol_plugin.py installs it as a third party would (an entry point).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.engine.basics.vocab import DecisionRule, TurnKind
from tui.engine.core import tally as tally_rules
from tui.engine.core.records import Turn
from tui.engine.core.schedule import Slot
from tui.engine.core.state import DebateState, Decision
from tui.engine.protocols.base import ContextItem, Protocol
from tui.engine.protocols.raw import Entry, RawSpec

if TYPE_CHECKING:
    from tui.engine.terms.spec import Spec

TEMPLATE = """# A moot monologue spec.
[debate]
title = "Think aloud"
motion = "Should the build cache be shared?"
protocol = "monologue"
proposer = "speaker"

[[debaters]]
id = "speaker"
model = "local"
"""


class MonologueProtocol(Protocol):
    """One speaker, one position per round, decided by its own vote."""

    name = "monologue"
    description = "one speaker states a position each round; its own vote decides"
    template = TEMPLATE
    default_rounds = 1
    role_keys = frozenset({"proposer"})

    @classmethod
    def voters(cls, spec: Spec) -> list[str]:
        return [spec.debate.proposer or ""]

    @classmethod
    def voter_count(cls, raw: RawSpec) -> int:
        return 1

    @classmethod
    def critique_pairs(cls, raw: RawSpec) -> list[tuple[Entry, Entry]]:
        return []

    @classmethod
    def spec_problems(cls, raw: RawSpec) -> list[str]:
        return super().spec_problems(raw) + raw.role_problems(cls.name, "proposer")

    def phases(self, round_no: int) -> list[str]:
        return ["statement"]

    def slots(self, state: DebateState, round_no: int, phase: str, start: int) -> list[Slot]:
        speaker = self.spec.debate.proposer or ""
        return [Slot(start, round_no, phase, speaker, TurnKind.POSITION)]

    def context(self, state: DebateState, slot: Slot) -> list[ContextItem]:
        return self.motion_items() + self.note_items(state)

    def after_phase(
        self, state: DebateState, round_no: int, phase: str, turns: list[Turn]
    ) -> Decision | None:
        winner = tally_rules.consensus(state.tally(), self.spec.threshold)
        return Decision(winner, DecisionRule.THRESHOLD_VOTE) if winner is not None else None
