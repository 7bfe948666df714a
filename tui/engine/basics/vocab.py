"""The engine's vocabularies, typed: turn kinds, run status, operator actions, rules.

Each is a ``StrEnum`` so the values written to session files stay plain strings
(``TurnKind.POSITION == "position"``) while code that misspells one fails the
type checker instead of a debate.
"""

from __future__ import annotations

from enum import StrEnum


class TurnKind(StrEnum):
    """The shared turn kinds (one content model each, in core/records.py); each protocol
    names the kinds it adds in its own module (``Protocol.turn_kinds``)."""

    POSITION = "position"
    CRITIQUE = "critique"


class RunStatus(StrEnum):
    """Where a run stands; the one source of the header's LIVE/PAUSED badge."""

    READY = "READY"
    LIVE = "LIVE"
    PAUSED = "PAUSED"
    AWAITING_OPERATOR = "AWAITING_OPERATOR"
    ENDED = "ENDED"


class OperatorAction(StrEnum):
    """What the operator (or a provider-failure choice) did, as recorded."""

    PAUSE = "pause"
    RESUME = "resume"
    NOTE = "note"
    ESCALATE = "escalate"
    DECIDE = "decide"
    EXTEND = "extend"
    REPLACE_MODEL = "replace_model"
    SKIP = "skip"
    RAISE_BUDGET = "raise_budget"  # a higher spending cap, so a stopped debate can go on
    CUT = "cut"  # the operator cancelled a turn mid-call; its partial text is kept
    REDO = "redo"  # the operator's answer to a cut: play that turn again (after any note)
    ADOPT = "adopt"  # `moot adopt`: the user vouches for records written before signing


class DecidedBy(StrEnum):
    RULE = "rule"
    OPERATOR = "operator"


class DecisionChannel(StrEnum):
    """How an operator decision reached moot, when not through the console or ``moot decide``.

    Recorded on the decide action (``via``) and in ``[result].decided_via``, so a
    decision an agent relayed, or one made from a link, is never taken for one a
    person typed at moot.
    """

    MCP = "mcp"  # the `decide` tool of `moot mcp`, called by an agent
    MCP_ELICITATION = "mcp_elicitation"  # the person at the MCP client, asked by `run` with wait
    WEB = "web"  # the decide page of `moot serve`, opened from a decide link


class DecisionRule(StrEnum):
    """Why a debate ended, named in ``[result].decision_rule``: the rules more than one
    protocol decides by; a protocol names its own (``Protocol.rule_reasons``)."""

    THRESHOLD_VOTE = "threshold_vote"
    MAX_ROUNDS_EXHAUSTED = "max_rounds_exhausted"
    RELEASE_GATE = "release_gate"  # a release was asked for and refused by code; no round left
    RUBRIC_FAILED = "rubric_failed"
    OPERATOR_DECISION = "operator_decision"
    OPERATOR_ESCALATION = "operator_escalation"
    INVALID_TURN = "invalid_turn"
    PROVIDER_FAILURE = "provider_failure"
    SELF_CRITIQUE_REFUSED = "self_critique_refused"
    BUDGET_EXHAUSTED = "budget_exhausted"  # the next call would start past a spending cap
    SESSION_FULL = "session_full"  # the session file had no room for the next turn


ESCALATE = "escalate"  # the decision value that hands a debate to the operator


def is_deferral(decision: object, rule: object) -> bool:
    """The operator's own ``escalate``: deferred to a person, still awaiting one.

    One meaning everywhere (the decide modal, ``moot decide``, the inbox, verify,
    the exports): the session stays unresolved, in the inbox, with the rationale.
    """
    return decision == ESCALATE and rule == DecisionRule.OPERATOR_DECISION


# The protocol a spec without ``protocol = ...`` runs. Kept here, not in the registry,
# so that readers of session files (home, inbox, watch) need not load every protocol;
# tests/engine/test_protocol_boundary.py checks that the registry holds it.
DEFAULT_PROTOCOL = "debate"
