"""The result report: the ``[result]`` table a session file ends with.

Every figure in it is computed from the recorded turns and the decision, so a
reader can re-check it from the file alone. Turn references are 1-based turn
numbers, the same numbers the file's ``[[turns]].index`` and the screen show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, cast

from tui.engine.basics.vocab import DecidedBy
from tui.engine.core.state import DebateState, Decision
from tui.engine.specs.spec import Spec

if TYPE_CHECKING:
    from tui.engine.protocols.base import Protocol


# One rubric assessment, named by its turn number ("pass" is a keyword: functional form).
RubricTurn = TypedDict(
    "RubricTurn", {"turn": int, "speaker": str, "pass": bool, "missing_evidence": int}
)


class ResultRecord(TypedDict, total=False):
    """The ``[result]`` table: what every protocol reports; each protocol's own keys follow
    (named in its module, never here)."""

    # Every protocol.
    debater_ids: list[str]
    protocol: str
    rounds_run: int
    max_rounds: int
    phase_sequence: list[str]
    consensus_threshold: int
    vote_tally: dict[str, int]
    final_votes: dict[str, str]
    speaker_schedule: list[str]
    speaker_selected_by: str
    turns: int
    invalid_turns: int
    tokens: int
    cost: float
    cross_family_policy: str
    cross_family_held: bool
    weak_adversarial_pass: bool
    # A rubric, when the spec has one.
    rubric_pass: bool
    rubric_missing_evidence: int
    rubric_assessed_turn: int
    rubric: list[dict[str, Any]]
    rubric_turns: list[RubricTurn]
    # The decision, once reached, and the facts its rule names.
    decision: str
    decision_rule: str  # a DecisionRule, or one its protocol names
    decided_by: DecidedBy
    decided_via: str  # DecisionChannel: set only when it came another way (MCP, the web)
    rationale: str
    refused_speaker: str
    refused_slot: int
    failed_speaker: str
    failure: str
    budget_exhausted: str  # the cap's spec key, e.g. budget.max_tokens
    budget_spent: float
    budget_cap: float
    budget_speaker: str  # whose call was not made
    session_full: int  # the bytes the session file would have held with the next turn
    missing_evidence: int
    # Then each protocol's own keys (``Protocol.report``, its decisions' ``extra``).


def result_record(
    spec: Spec, state: DebateState, decision: Decision | None, protocol: Protocol
) -> ResultRecord:
    """The ``[result]`` table, with the protocol's own report beside it."""
    turns = state.turns
    out: ResultRecord = {
        "debater_ids": list(spec.ids),
        "protocol": spec.debate.protocol,
        "rounds_run": max((t.round for t in turns), default=0),
        "max_rounds": state.max_rounds,
        "phase_sequence": list(state.phase_sequence),
        "consensus_threshold": spec.threshold,
        "vote_tally": state.tally(),
        "final_votes": dict(state.latest_vote),
        "speaker_schedule": [t.speaker for t in turns],
        "speaker_selected_by": "schedule",
        "turns": len(turns),
        "invalid_turns": sum(1 for t in turns if t.invalid),
        "tokens": sum(t.tokens_in + t.tokens_out for t in turns),
        "cost": round(sum(t.cost for t in turns), 6),
    }
    if not protocol.shows_votes and not any(out["vote_tally"].values()):
        del out["vote_tally"], out["final_votes"]  # a panel that votes on nothing: no zeros
    held = [t.cross_family_held for t in turns if t.cross_family_held is not None]
    if held:
        out["cross_family_policy"] = spec.debate.cross_family
        out["cross_family_held"] = all(held)
        out["weak_adversarial_pass"] = not all(held)
    assessed = [t for t in turns if "rubric" in t.derived]
    if assessed:
        last = assessed[-1].derived["rubric"]
        out["rubric_pass"] = last["pass"]
        out["rubric_missing_evidence"] = last["missing_evidence"]
        out["rubric_assessed_turn"] = assessed[-1].index
        out["rubric"] = last["properties"]  # evidence, rationale, verdict per property
        out["rubric_turns"] = [
            {
                "turn": t.index,
                "speaker": t.speaker,
                "pass": t.derived["rubric"]["pass"],
                "missing_evidence": t.derived["rubric"]["missing_evidence"],
            }
            for t in assessed
        ]
    if decision is not None:
        out["decision"] = decision.decision
        out["decision_rule"] = decision.rule
        out["decided_by"] = decision.decided_by
        if decision.rationale:
            out["rationale"] = decision.rationale
        out.update(cast(ResultRecord, decision.extra))
    out.update(cast(ResultRecord, protocol.report(state)))
    return out
