"""``debate``: rounds of proposal, critique, revision and consensus phases."""

from __future__ import annotations

from tui.engine import tally as tally_rules
from tui.engine.events import Slot
from tui.engine.protocols.base import ContextItem, Protocol
from tui.engine.records import Turn
from tui.engine.schedule import critique_target, round_order
from tui.engine.state import DebateState, Decision


class DebateProtocol(Protocol):
    """Every debater speaks once per phase; each critiques the next in order."""

    name = "debate"

    def phases(self, round_no: int) -> list[str]:
        return self.spec.phases

    def slots(self, state: DebateState, round_no: int, phase: str, start: int) -> list[Slot]:
        order = round_order(self.spec.ids, round_no, self.spec.debate.rotate)
        if phase == "critique":
            return [
                Slot(start + i, round_no, phase, s, "critique", critique_target(order, s))
                for i, s in enumerate(order)
            ]
        return [Slot(start + i, round_no, phase, s, "position") for i, s in enumerate(order)]

    def context(self, state: DebateState, slot: Slot) -> list[ContextItem]:
        items = self.motion_items()
        me = slot.speaker
        own = state.latest_position.get(me)
        if slot.phase == "critique":
            target = state.latest_position.get(slot.target or "")
            if target is not None:
                items.append(self.position_item(target, f"Position of {slot.target} to critique"))
        elif slot.phase == "consensus":
            for did in self.spec.ids:
                turn = state.latest_position.get(did)
                if turn is not None:
                    who = "your" if did == me else f"{did}'s"
                    items.append(self.position_item(turn, f"Latest position ({who})"))
        else:  # proposal or revision
            if own is not None:
                items.append(self.position_item(own, "Your latest position"))
            for critic, turn in sorted(state.critiques_of.get(me, {}).items()):
                items.append(self.critique_item(turn, f"Critique of your position by {critic}"))
            if slot.phase == "proposal" and slot.round > 1:
                for did in self.spec.ids:
                    turn = state.latest_position.get(did)
                    if did != me and turn is not None:
                        items.append(self.position_item(turn, f"Latest position of {did}"))
        return items + self.note_items(state)

    def after_phase(
        self, state: DebateState, round_no: int, phase: str, turns: list[Turn]
    ) -> Decision | None:
        winner = tally_rules.consensus(state.tally(), self.spec.threshold)
        if winner is not None:
            return Decision(winner, "threshold_vote")
        if self.spec.debate.on_invalid == "escalate" and any(t.invalid for t in turns):
            return Decision("escalate", "invalid_turn")
        return None
