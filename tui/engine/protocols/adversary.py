"""``adversary``: one proposer, one distinct critic, revise until release.

The critic's routing is a request. Code owns the release gate: a release is
granted only when the critique leaves no weakness open (verdict
``no_defect_found``) and scores at least ``release_score``; otherwise the
proposer revises while rounds remain, then the debate escalates.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from tui.engine.basics.vocab import ESCALATE, DecisionRule, TurnKind
from tui.engine.core.records import Critique, Turn
from tui.engine.core.schedule import Slot
from tui.engine.core.sections import Fact, Section, Tone, critique_sections, recorded
from tui.engine.core.state import DebateState, Decision
from tui.engine.core.substance import StatementRules
from tui.engine.protocols.base import (
    CRITIQUE_STATEMENTS,
    Claims,
    ContextItem,
    Protocol,
    RecordedSession,
    cycled,
    scripted_critique,
)
from tui.engine.protocols.raw import Entry, RawSpec

if TYPE_CHECKING:
    from tui.engine.core.ports import TurnRequest
    from tui.engine.terms.spec import RubricRole, Script, Spec

# The turn kind this protocol adds, and the rules only it decides by (session files hold them).
ADVERSARY_CRITIQUE = "adversary_critique"
CRITIC_RELEASE = "critic_release"  # the critic asked to release and the release gate held
CRITIC_ESCALATION = "critic_escalation"


class AdversaryCritique(Critique):
    """The adversary protocol's critique: adds a score and a routing decision."""

    score: int = Field(ge=0, le=100, description="Quality of the proposal, 0 to 100.")
    routing: Literal["release", "revise", "escalate"] = Field(
        description="release it, send it back for revision, or escalate to a human."
    )
    vote: str = Field(default="", description="Leave empty; routing is your vote.")


# The commented starting spec ``moot new --protocol adversary`` writes; it validates as written.
TEMPLATE = """# A moot adversary spec: one proposer, one distinct critic.
[debate]
title = "Rollout plan review"
motion = "Write the rollout plan for moving sessions from cookies to tokens."
protocol = "adversary"
proposer = "author"
critic = "red-team"          # must differ from the proposer: self-critique is refused
max_rounds = 2               # revise loops before escalating to the operator
retries = 3                  # the embedded model's junk answer is asked again three times
release_score = 80           # a release needs no open weakness and at least this score

[[debaters]]
id = "author"
model = "local"
max_tokens = 220             # sized for the embedded model: raise it for a real one
role = "Writes a concrete, staged rollout plan."

[[debaters]]
id = "red-team"
model = "local"
max_tokens = 220
role = "Finds every way the plan could fail in production."
"""


def release_refusal(content: dict[str, Any], release_score: int) -> list[str]:
    """Why the release gate refuses a critique (empty: the gate holds).

    Pure, so a reader can re-check a recorded critique from the file alone.
    """
    reasons = []
    weaknesses = content.get("weaknesses") or []
    if weaknesses:
        n = len(weaknesses)
        reasons.append(f"{n} weakness{'' if n == 1 else 'es'} left open")
    elif content.get("verdict") != "no_defect_found":
        reasons.append(f"verdict {content.get('verdict')!r}, not no_defect_found")
    score = content.get("score", 0)
    if score < release_score:
        reasons.append(f"score {score} is below release_score {release_score}")
    return reasons


class AdversaryProtocol(Protocol):
    """The critic requests release, revise or escalate; code decides which happens."""

    name = "adversary"
    description = "a proposer and a critic who releases, asks to revise or escalates"
    tasks = {
        ("proposal", 0): (
            "Write your proposal on the motion: what to do, how, and why. Be specific enough "
            "that a critic can find concrete faults."
        ),
        ("revision", 0): (
            "Revise your proposal to answer the critique. Address every weakness; keep what "
            "was not criticised."
        ),
        ("critique", 0): (
            "You are the adversary. Your only job is to find failures in the proposal. Do not "
            "praise it. List concrete weaknesses (at least one unless you truly find none, in "
            "which case say no_defect_found), suggestions, a score from 0 to 100, and a "
            "routing: release if it is ready, revise if it must change, escalate if a human "
            "must decide. Your routing is a request: the engine releases only a proposal with no "
            "weakness left (no_defect_found) and a score at or above the release score."
        ),
    }
    template = TEMPLATE
    default_rounds = 3
    role_keys = frozenset({"proposer", "critic", "release_score"})
    debater_keys = frozenset({"proposer", "critic"})
    votes_decide = False  # the critic's routing is a request; the release gate decides
    turn_kinds = {ADVERSARY_CRITIQUE: AdversaryCritique}
    examples = {
        ADVERSARY_CRITIQUE: {
            "weaknesses": ["The proposal gives no evidence for its main claim."],
            "suggestions": ["Add one measured fact that supports the claim."],
            "score": 40,
            "routing": "revise",
        }
    }
    negative_channels = {ADVERSARY_CRITIQUE: ("weaknesses", "no_defect_found")}
    verifier_kinds = Protocol.verifier_kinds | {ADVERSARY_CRITIQUE}
    statement_rules = {
        ADVERSARY_CRITIQUE: StatementRules(
            channel=CRITIQUE_STATEMENTS.channel, answers=("routing", "verdict", "vote")
        )
    }
    rule_reasons = {
        CRITIC_RELEASE: "the critic asked to release it and the release gate held",
        DecisionRule.RELEASE_GATE: (
            "a release was asked for, the release gate refused it, and no round was left"
        ),
        CRITIC_ESCALATION: "the critic escalated it",
    }

    @classmethod
    def result_sections(cls, result: dict[str, Any], turns: Sequence[Turn]) -> list[Section]:
        """The proposal the last critique judged, and how it scored and routed it."""
        names = {
            "proposal_id": "proposal",
            "weakness_count": "weaknesses",
            "critique_score": "score",
            "routing_decision": "routing",
        }
        return recorded("last critique", result, names)

    @classmethod
    def present(
        cls, kind: str, content: dict[str, Any], derived: dict[str, Any], variant: str | None
    ) -> Sequence[Section] | None:
        """A critique that also scores and routes."""
        if kind != ADVERSARY_CRITIQUE:
            return None
        more = []
        if "score" in content:
            more.append(Fact("score", f"{content['score']}/100", Tone.MUTED))
            more.append(Fact("routing", str(content.get("routing", "")), Tone.STRONG))
        return critique_sections(content, *more)

    def rubric_role(self, slot: Slot) -> RubricRole | None:
        """The adversary's critic is a critic."""
        return "critic" if slot.kind == ADVERSARY_CRITIQUE else super().rubric_role(slot)

    @classmethod
    def scripted(cls, request: TurnRequest, script: Script) -> dict[str, Any]:
        """A critique whose vote is its routing, with a score."""
        n = request.speaker_turn
        content = scripted_critique(request, script)
        content["score"] = cycled(script.scores, n, 50)
        content["routing"] = content["vote"] = cycled(script.routings, n, "release")
        return content

    @classmethod
    def voters(cls, spec: Spec) -> list[str]:
        return [spec.debate.proposer or "", spec.debate.critic or ""]

    @classmethod
    def voter_count(cls, raw: RawSpec) -> int:
        return 2

    @classmethod
    def critique_pairs(cls, raw: RawSpec) -> list[tuple[Entry, Entry]]:
        return raw.pairs([raw.debate.get("critic")], [raw.debate.get("proposer")])

    @classmethod
    def spec_problems(cls, raw: RawSpec) -> list[str]:
        return super().spec_problems(raw) + raw.pair_problems(cls.name, "proposer", "critic")

    @property
    def proposer(self) -> str:
        return self.spec.debate.proposer or ""

    @property
    def critic(self) -> str:
        return self.spec.debate.critic or ""

    def phases(self, round_no: int) -> list[str]:
        return ["proposal" if round_no == 1 else "revision", "critique"]

    def slots(self, state: DebateState, round_no: int, phase: str, start: int) -> list[Slot]:
        if phase == "critique":
            return [Slot(start, round_no, phase, self.critic, ADVERSARY_CRITIQUE, self.proposer)]
        return [Slot(start, round_no, phase, self.proposer, TurnKind.POSITION)]

    def context(self, state: DebateState, slot: Slot) -> list[ContextItem]:
        items = self.motion_items()
        proposal = state.latest_position.get(self.proposer)
        if slot.phase == "critique":
            if proposal is not None:
                items.append(self.position_item(proposal, f"Proposal by {self.proposer}"))
        else:
            if proposal is not None:
                items.append(self.position_item(proposal, "Your latest proposal"))
            critique = state.critiques_of.get(self.proposer, {}).get(self.critic)
            if critique is not None:
                items.append(self.critique_item(critique, f"Critique by {self.critic}"))
        return items + self.note_items(state)

    def annotate(self, state: DebateState, slot: Slot, turn: Turn) -> None:
        """Record the request, the gate's verdict on it and what code decided."""
        if slot.kind != ADVERSARY_CRITIQUE:
            return
        reasons = release_refusal(turn.content, self.spec.debate.release_score)
        turn.derived["routing_requested"] = turn.content.get("routing", "")
        turn.derived["release_gate"] = {"pass": not reasons, "reasons": reasons}
        turn.derived["routing_decision"] = self._decided(turn, state.max_rounds)

    def after_phase(
        self, state: DebateState, round_no: int, phase: str, turns: list[Turn]
    ) -> Decision | None:
        if any(t.invalid for t in turns):
            return Decision(ESCALATE, DecisionRule.INVALID_TURN)
        if phase != "critique":
            return None
        return self._route(turns[-1], state.max_rounds)

    def _decided(self, turn: Turn, max_rounds: int) -> str:
        """The routing code decided for a critique: release, revise or escalate."""
        decision = self._route(turn, max_rounds)
        return decision.decision if decision is not None else "revise"

    def _route(self, turn: Turn, max_rounds: int) -> Decision | None:
        """What follows a valid critique: release, escalate, or None to revise.

        Only a request to release can release, and only through the gate; a
        refused release revises while rounds remain, then escalates.
        """
        requested = turn.content.get("routing")
        if requested == ESCALATE:
            return Decision(ESCALATE, CRITIC_ESCALATION)
        if requested != "release":
            return None  # revise; the runner escalates once no round is left
        rubric = turn.derived.get("rubric")
        if rubric is not None and not rubric["pass"]:
            # Default no: a release the evidence does not support goes to the operator.
            return Decision(
                ESCALATE,
                DecisionRule.RUBRIC_FAILED,
                extra={"missing_evidence": rubric["missing_evidence"]},
            )
        refused = release_refusal(turn.content, self.spec.debate.release_score)
        if not refused:
            return Decision("release", CRITIC_RELEASE)
        if turn.round >= max_rounds:
            return Decision(ESCALATE, DecisionRule.RELEASE_GATE, extra={"release_refused": refused})
        return None

    def turn_claims(self, data: RecordedSession, out: Claims, turn: Turn) -> None:
        """A critic's routing is a request: a release stands only on request and through the gate."""
        decided = turn.derived.get("routing_decision")
        if turn.kind != ADVERSARY_CRITIQUE or decided is None:
            return  # written before the gate was recorded: the result's replay covers it
        requested = turn.content.get("routing")
        reasons = release_refusal(turn.content, data.spec.debate.release_score)
        if decided != "release":
            out.check(
                f"turn {turn.index}", "release gate", True, f"{requested} requested, {decided}"
            )
            return
        ok = requested == "release" and not reasons
        out.check(
            f"turn {turn.index}",
            "release gate",
            ok,
            f"release requested and the gate holds (release_score {data.spec.debate.release_score})"
            if ok
            else f"released, but {requested} was requested"
            + (f" and the gate refuses: {'; '.join(reasons)}" if reasons else ""),
        )

    def report(self, state: DebateState) -> dict[str, Any]:
        critique = next((t for t in reversed(state.turns) if t.kind == ADVERSARY_CRITIQUE), None)
        proposal = state.latest_position.get(self.proposer)
        out: dict[str, Any] = {
            "proposer_id": self.proposer,
            "critic_id": self.critic,
            # Self-critique never runs: the critic is a different debater (checked
            # at validation and again before every critique call).
            "self_critique_skipped": all(
                t.speaker != t.target for t in state.turns if t.kind == ADVERSARY_CRITIQUE
            ),
            "revisions": sum(
                1 for t in state.turns if t.speaker == self.proposer and t.phase == "revision"
            ),
        }
        if proposal is not None:
            out["proposal_id"] = f"r{proposal.round}:{proposal.speaker}:t{proposal.index}"
        if critique is not None:
            c = critique.content
            weaknesses = c.get("weaknesses", [])
            # Recorded when the critique was played; recomputed for files that predate it.
            decided = (
                ESCALATE
                if critique.invalid
                else critique.derived.get("routing_decision")
                or self._decided(critique, state.max_rounds)
            )
            out.update(
                negative_channel_present=(not critique.invalid)
                and (bool(weaknesses) or c.get("verdict") == "no_defect_found"),
                weakness_count=len(weaknesses),
                critique_score=c.get("score", 0),
                verdict=c.get("verdict", "invalid" if critique.invalid else ""),
                routing_requested=c.get("routing", ""),
                routing_decision=decided,
            )
            if critique.cross_family_held is not None:
                out["cross_family_held"] = critique.cross_family_held
                out["weak_adversarial_pass"] = not critique.cross_family_held
        return out
