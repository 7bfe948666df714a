"""``debate``: rounds of proposal, critique, revision and consensus phases."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui.engine.basics.vocab import ESCALATE, DecisionRule, TurnKind
from tui.engine.core import tally as tally_rules
from tui.engine.core.records import Turn
from tui.engine.core.schedule import Slot, critique_target, round_order
from tui.engine.core.state import DebateState, Decision
from tui.engine.protocols.base import ContextItem, Protocol
from tui.engine.protocols.raw import Entry, RawSpec

if TYPE_CHECKING:
    from tui.engine.terms.spec import Spec

PHASES = ("proposal", "critique", "revision", "consensus")


# The commented starting spec ``moot new --protocol debate`` writes; it validates as written.
TEMPLATE = """# A moot debate spec. Validate with: moot validate {name}
[debate]
title = "Adopt event sourcing for the order service?"
motion = "Move the order service to event sourcing this quarter."
protocol = "debate"          # debate | adversary | challenge | refine | delphi
max_rounds = 2               # rounds before the debate escalates to the operator
consensus_threshold = 2      # votes one option needs (and no tie) to decide
# phases = ["proposal", "critique", "revision", "consensus"]
# votes = ["release", "revise", "escalate"]
# rotate = false             # rotate the speaking order by one each round
# early_stop = true          # false: votes decide only after the last round
# cross_family = "warn"      # off | warn | require: critics from another model family
# retries = 1                # re-asks after an invalid turn before it is recorded invalid

[[debaters]]
id = "architect"
model = "local"              # "local" (embedded), "scripted", or any LiteLLM model string
max_tokens = 300             # sized for the embedded model: raise it for a real one
role = "Argues for event sourcing: auditability and replay."

[[debaters]]
id = "operator-sre"
model = "local"
max_tokens = 300
role = "Argues against: operational cost and migration risk."

[[debaters]]
id = "pragmatist"
model = "local"
max_tokens = 300
role = "Looks for the smallest change that gets most of the benefit."

# A real model, reading its key from an environment variable (never a literal key):
# [[debaters]]
# id = "claude"
# model = "anthropic/claude-sonnet-4-5"
# api_key_env = "ANTHROPIC_API_KEY"
# temperature = 0.7
"""


class DebateProtocol(Protocol):
    """Every debater speaks once per phase; each critiques the next in order."""

    name = "debate"
    description = "rounds of proposal, critique, revision, consensus; a vote decides"
    tasks = {
        ("proposal", 1): (
            "State your opening position on the motion. Be concrete: name the decision you "
            "favour, the strongest reason for it, and the main risk you accept."
        ),
        ("proposal", 2): (
            "A new round. Restate your position, keeping what survived the critiques and "
            "changing what did not. Say plainly if you changed your mind and why."
        ),
        ("revision", 0): (
            "Revise your position in light of the critiques of it. Answer each weakness: "
            "fix it, or explain precisely why it does not hold."
        ),
        ("consensus", 0): (
            "Read every debater's latest position and cast your final vote for this round. "
            "Vote for what the arguments support, not for agreement's sake."
        ),
        ("critique", 0): (
            "Critique the position shown. Find what could fail: unstated assumptions, missing "
            "evidence, risks, and cases where it breaks. List each weakness as one specific "
            "sentence. Only if you find no weakness at all, give the verdict no_defect_found."
        ),
    }
    template = TEMPLATE
    default_rounds = 2
    role_keys = frozenset({"early_stop"})
    open_votes = True  # every debater votes in the consensus phase, so an answer can count

    @classmethod
    def voters(cls, spec: Spec) -> list[str]:
        return spec.ids

    @classmethod
    def voter_count(cls, raw: RawSpec) -> int:
        return len(raw.entries)

    @classmethod
    def critique_pairs(cls, raw: RawSpec) -> list[tuple[Entry, Entry]]:
        """Each debater critiques the next in registration order."""
        e = raw.entries
        if len(e) < 2:
            return []
        return [(e[i], e[(i + 1) % len(e)]) for i in range(len(e))]

    @classmethod
    def spec_problems(cls, raw: RawSpec) -> list[str]:
        """Phases, when given, are known ones; a critique phase needs two debaters."""
        problems = []
        phases = raw.debate.get("phases")
        if isinstance(phases, list):
            for j, ph in enumerate(phases):
                if isinstance(ph, str) and ph not in PHASES:
                    problems.append(
                        f"debate.phases[{j}]: unknown phase {ph!r}; expected one of "
                        + ", ".join(PHASES)
                    )
            if not phases:
                problems.append("debate.phases: needs at least one phase")
        has_critique = phases is None or (isinstance(phases, list) and "critique" in phases)
        if has_critique and len(raw.entries) == 1:
            problems.append(
                "debaters: a debate with a critique phase needs at least two debaters; "
                "one debater would critique itself, and self-critique is refused"
            )
        return problems

    def phases(self, round_no: int) -> list[str]:
        chosen = self.spec.debate.phases
        return list(chosen if chosen is not None else PHASES)

    def slots(self, state: DebateState, round_no: int, phase: str, start: int) -> list[Slot]:
        order = round_order(self.spec.ids, round_no, self.spec.debate.rotate)
        if phase == "critique":
            return [
                Slot(start + i, round_no, phase, s, TurnKind.CRITIQUE, critique_target(order, s))
                for i, s in enumerate(order)
            ]
        return [Slot(start + i, round_no, phase, s, TurnKind.POSITION) for i, s in enumerate(order)]

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
        last = round_no >= state.max_rounds and phase == self.phases(round_no)[-1]
        if not self.spec.debate.early_stop and not last:
            return None  # every debater speaks in every round; the votes count at the end
        winner = tally_rules.consensus(state.tally(), self.spec.threshold)
        if winner is not None:
            return Decision(winner, DecisionRule.THRESHOLD_VOTE)
        if self.spec.debate.on_invalid == "escalate" and any(t.invalid for t in turns):
            return Decision(ESCALATE, DecisionRule.INVALID_TURN)
        return None
